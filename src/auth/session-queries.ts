import { randomToken, sha256Hex } from "../lib/crypto";
import type { Db } from "../lib/db";
import { drain } from "../lib/drain";
import { DAY, isoTime } from "../lib/time";
import { ulid } from "../lib/ulid";
import { type Account, type AccountRow, type Plan, toAccount } from "./account";

export const SESSION_COOKIE = "svc_session";
export const SESSION_LIFETIME_SECONDS = (7 * DAY) / 1000;

export type SessionCaller = { sessionId: string; accountId: string; approved: boolean; plan: Plan; account: Account };

/** Starts a session; returns the cookie token, which is stored only as its SHA-256. */
export async function createSession(db: Db, accountId: string, now: number): Promise<string> {
  const token = randomToken();
  await db
    .prepare("INSERT INTO sessions (id, token_hash, account_id, created_at, expires_at) VALUES (?, ?, ?, ?, ?)")
    .bind(ulid(now), await sha256Hex(token), accountId, isoTime(now), isoTime(now + SESSION_LIFETIME_SECONDS * 1000))
    .run();
  return token;
}

/**
 * The live session behind a cookie token, with its account. When `projectId` is given, the same
 * query also tells whether the account owns that project (a deleted project is no one's), so project
 * routes need no second trip.
 */
export async function findSession(
  db: Db,
  token: string,
  now: number,
  projectId: string | null = null,
): Promise<(SessionCaller & { ownsProject: boolean }) | null> {
  const row = await db
    .prepare(
      `SELECT s.id AS session_id, a.id, a.email, a.approved, a.plan, a.trial_ends_at, a.created_at,
              EXISTS (SELECT 1 FROM projects p WHERE p.id = ?3 AND p.account_id = a.id AND p.deleted_at IS NULL)
                AS owns_project
       FROM sessions s JOIN accounts a ON a.id = s.account_id
       WHERE s.token_hash = ?1 AND s.expires_at > ?2`,
    )
    .bind(await sha256Hex(token), isoTime(now), projectId)
    .first<{ session_id: string; owns_project: number } & Omit<AccountRow, "password_hash">>();
  if (!row) return null;
  const account = toAccount(row, now);
  return {
    sessionId: row.session_id,
    accountId: account.id,
    approved: account.approved,
    plan: account.plan,
    account,
    ownsProject: row.owns_project === 1,
  };
}

export async function deleteSession(db: Db, sessionId: string): Promise<void> {
  await db.prepare("DELETE FROM sessions WHERE id = ?").bind(sessionId).run();
}

/** Ends every session of an account (it was suspended). */
export function deleteAccountSessionsStatement(db: Db, accountId: string): D1PreparedStatement {
  return db.prepare("DELETE FROM sessions WHERE account_id = ?").bind(accountId);
}

/** Deletes the sessions that have expired, in bounded batches (the next run goes on); how many. */
export function deleteExpiredSessions(db: Db, now: number = Date.now()): Promise<number> {
  const statement = db.prepare(
    "DELETE FROM sessions WHERE id IN (SELECT id FROM sessions WHERE expires_at <= ? ORDER BY expires_at LIMIT ?)",
  );
  return drain(async (limit) => (await statement.bind(isoTime(now), limit).run()).meta.changes);
}
