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

/** The stored password hash of an account, or null for none. */
export function findPasswordHash(db: Db, id: string): Promise<string | null> {
  return db.prepare("SELECT password_hash FROM accounts WHERE id = ?").bind(id).first<string>("password_hash");
}

/**
 * Replaces the account's password hash `previous` with `next` and ends every session of the account
 * but `keepSessionId`, in one batch. A compare-and-swap: when the hash is no longer `previous` (a
 * concurrent change came first) nothing changes, no session ends, and the answer is false.
 */
export async function replacePassword(
  db: Db,
  id: string,
  hashes: { previous: string; next: string },
  keepSessionId: string,
): Promise<boolean> {
  const [updated] = await db.batch([
    db
      .prepare("UPDATE accounts SET password_hash = ?3 WHERE id = ?1 AND password_hash = ?2")
      .bind(id, hashes.previous, hashes.next),
    db
      .prepare(
        `DELETE FROM sessions WHERE account_id = ?1 AND id <> ?2
           AND (SELECT password_hash FROM accounts WHERE id = ?1) = ?3`,
      )
      .bind(id, keepSessionId, hashes.next),
  ]);
  return updated?.meta.changes === 1;
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
