import type { Db } from "../lib/db";
import { isoTime } from "../lib/time";

export type KeyRef = { scope: string; method: string; target: string; key: string };
export type KeyRow = KeyRef & {
  body_hash: string;
  state: "running" | "done";
  locked_until: string | null;
  response: string | null;
  created_at: string;
};

/**
 * Claims a key for a request, atomically: a new key is inserted as running; one whose claim
 * lapsed (its request died) is taken over when the body is the same. Returns the row as it is after
 * the statement and whether this request holds the claim.
 */
export async function claimKey(
  db: Db,
  ref: KeyRef,
  bodyHash: string,
  now: number,
  lockMs: number,
): Promise<{ row: KeyRow; claimed: boolean }> {
  const lockedUntil = isoTime(now + lockMs);
  const claimed = await db
    .prepare(
      `INSERT INTO idempotency_keys (scope, method, target, key, body_hash, state, locked_until, created_at)
       VALUES (?1, ?2, ?3, ?4, ?5, 'running', ?6, ?7)
       ON CONFLICT (scope, method, target, key) DO UPDATE SET locked_until = excluded.locked_until
         WHERE state = 'running' AND locked_until < ?7 AND body_hash = excluded.body_hash
       RETURNING *`,
    )
    .bind(ref.scope, ref.method, ref.target, ref.key, bodyHash, lockedUntil, isoTime(now))
    .first<KeyRow>();
  if (claimed) return { row: claimed, claimed: true };
  const row = await db
    .prepare("SELECT * FROM idempotency_keys WHERE scope = ? AND method = ? AND target = ? AND key = ?")
    .bind(ref.scope, ref.method, ref.target, ref.key)
    .first<KeyRow>();
  if (!row) throw new Error("idempotency key neither claimed nor found");
  return { row, claimed: false };
}

/** Stores the answer of the request that holds the claim. */
export async function storeAnswer(db: Db, ref: KeyRef, lockedUntil: string, response: string): Promise<void> {
  await db
    .prepare(
      `UPDATE idempotency_keys SET state = 'done', response = ?5, locked_until = NULL
       WHERE scope = ?1 AND method = ?2 AND target = ?3 AND key = ?4 AND state = 'running' AND locked_until = ?6`,
    )
    .bind(ref.scope, ref.method, ref.target, ref.key, response, lockedUntil)
    .run();
}

/** Gives the key back unused (the request did not succeed): a retry runs again. */
export async function releaseKey(db: Db, ref: KeyRef, lockedUntil: string): Promise<void> {
  await db
    .prepare(
      `DELETE FROM idempotency_keys
       WHERE scope = ?1 AND method = ?2 AND target = ?3 AND key = ?4 AND state = 'running' AND locked_until = ?5`,
    )
    .bind(ref.scope, ref.method, ref.target, ref.key, lockedUntil)
    .run();
}

/** Deletes up to `limit` keys created before `before`; how many it deleted. */
export async function deleteKeysBefore(db: Db, before: string, limit: number): Promise<number> {
  const result = await db
    .prepare(
      `DELETE FROM idempotency_keys WHERE rowid IN (
         SELECT rowid FROM idempotency_keys WHERE created_at < ? ORDER BY created_at LIMIT ?)`,
    )
    .bind(before, limit)
    .run();
  return result.meta.changes;
}
