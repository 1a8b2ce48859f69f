import type { Position } from "../lib/cursor";
import { type Condition, type Db, newestFirstPage } from "../lib/db";
import type { AccountRow, OperatorPlan } from "./account";
import { deleteAccountSessionsStatement } from "./session-queries";

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
    deleteAccountSessionsStatement(db, id),
  ]);
  return updated?.results[0] ?? null;
}

export function setPlan(db: Db, id: string, plan: OperatorPlan): Promise<AccountRow | null> {
  return db.prepare("UPDATE accounts SET plan = ? WHERE id = ? RETURNING *").bind(plan, id).first<AccountRow>();
}

/** `limit + 1` accounts after `after`, newest first; only approved ones, or only the others, if asked. */
export async function listAccounts(
  db: Db,
  approved: boolean | undefined,
  limit: number,
  after: Position | null,
): Promise<AccountRow[]> {
  const conditions: Condition[] = approved === undefined ? [] : [{ sql: "approved = ?", params: [approved ? 1 : 0] }];
  const { sql, params } = newestFirstPage("accounts", conditions, after, limit);
  return (
    await db
      .prepare(sql)
      .bind(...params)
      .all<AccountRow>()
  ).results;
}
