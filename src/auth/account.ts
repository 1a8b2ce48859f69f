import { DAY, isoTime } from "../lib/time";

export const TRIAL_DAYS = 14;
/** The plans an operator sets; `trial` is every account's plan while its trial runs. */
export const OPERATOR_PLANS = ["free", "pro", "business"] as const;
export type OperatorPlan = (typeof OPERATOR_PLANS)[number];
export const PLANS = ["trial", ...OPERATOR_PLANS] as const;
export type Plan = (typeof PLANS)[number];

export type AccountRow = {
  id: string;
  email: string;
  password_hash: string;
  approved: number;
  plan: OperatorPlan | null;
  trial_ends_at: string;
  created_at: string;
};

export type Account = {
  id: string;
  email: string;
  approved: boolean;
  plan: Plan;
  trialEndsAt: string;
  createdAt: string;
};

/** Trial while the trial runs, then the plan an operator set, else free. */
export function currentPlan(row: Pick<AccountRow, "plan" | "trial_ends_at">, now: number): Plan {
  if (now < Date.parse(row.trial_ends_at)) return "trial";
  return row.plan ?? "free";
}

export function toAccount(row: Omit<AccountRow, "password_hash">, now: number = Date.now()): Account {
  return {
    id: row.id,
    email: row.email,
    approved: row.approved === 1,
    plan: currentPlan(row, now),
    trialEndsAt: row.trial_ends_at,
    createdAt: row.created_at,
  };
}

export function trialEnd(createdAt: number): string {
  return isoTime(createdAt + TRIAL_DAYS * DAY);
}
