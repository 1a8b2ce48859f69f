import type { Db } from "../lib/db";
import { DAY, isoTime } from "../lib/time";
import { deleteAccountSessions } from "./sessions";

export const TRIAL_DAYS = 14;
export const OPERATOR_PLANS = ["free", "pro", "business"] as const;
export type OperatorPlan = (typeof OPERATOR_PLANS)[number];
export type Plan = "trial" | OperatorPlan;

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

export async function insertAccount(db: Db, row: AccountRow): Promise<"created" | "email_taken"> {
  try {
    await db
      .prepare(
        `INSERT INTO accounts (id, email, password_hash, approved, plan, trial_ends_at, created_at)
         VALUES (?, ?, ?, ?, ?, ?, ?)`,
      )
      .bind(row.id, row.email, row.password_hash, row.approved, row.plan, row.trial_ends_at, row.created_at)
      .run();
    return "created";
  } catch (error) {
    if (error instanceof Error && /UNIQUE constraint failed: accounts\.email/.test(error.message)) {
      return "email_taken";
    }
    throw error;
  }
}

export function findAccountByEmail(db: Db, email: string): Promise<AccountRow | null> {
  return db.prepare("SELECT * FROM accounts WHERE email = ?").bind(email).first<AccountRow>();
}

export function setApproved(db: Db, id: string, approved: boolean): Promise<AccountRow | null> {
  return db
    .prepare("UPDATE accounts SET approved = ? WHERE id = ? RETURNING *")
    .bind(approved ? 1 : 0, id)
    .first<AccountRow>();
}

/** Suspends an account: not approved any more, and every session of it ends in the same batch. */
export async function suspendAccount(db: Db, id: string): Promise<AccountRow | null> {
  const [updated] = await db.batch<AccountRow>([
    db.prepare("UPDATE accounts SET approved = 0 WHERE id = ? RETURNING *").bind(id),
    deleteAccountSessions(db, id),
  ]);
  return updated?.results[0] ?? null;
}

export function setPlan(db: Db, id: string, plan: OperatorPlan): Promise<AccountRow | null> {
  return db.prepare("UPDATE accounts SET plan = ? WHERE id = ? RETURNING *").bind(plan, id).first<AccountRow>();
}
