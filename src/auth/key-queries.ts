import { sha256Hex } from "../lib/crypto";
import type { Db } from "../lib/db";
import type { Mode } from "../lib/tenant";
import { isoTime, MINUTE } from "../lib/time";
import type { Scope } from "./context";

// Authentication's reads of API keys: what a key looks like and who it makes the caller. Creating,
// listing and revoking keys is the api-keys capability's (src/api-keys/), above this one.

export const KEY_PATTERN = /^svc_(live|test)_[A-Za-z0-9_-]{20,100}$/;

export type KeyCaller = {
  keyId: string;
  projectId: string;
  /** The key's mode: the only mode of objects it sees and creates (docs/api-guide.md#test-mode-and-going-live). */
  mode: Mode;
  accountId: string;
  scopes: Scope[];
  approved: boolean;
  lastUsedAt: string | null;
};

/** The unrevoked key of a live project with this secret, with its project's owner, in one query. */
export async function findKeyCaller(db: Db, key: string): Promise<KeyCaller | null> {
  const row = await db
    .prepare(
      `SELECT k.id, k.project_id, k.scopes, k.mode, k.last_used_at, p.account_id, a.approved
       FROM api_keys k
       JOIN projects p ON p.id = k.project_id AND p.deleted_at IS NULL
       JOIN accounts a ON a.id = p.account_id
       WHERE k.key_hash = ? AND k.revoked_at IS NULL`,
    )
    .bind(await sha256Hex(key))
    .first<{
      id: string;
      project_id: string;
      scopes: string;
      mode: Mode;
      last_used_at: string | null;
      account_id: string;
      approved: number;
    }>();
  if (!row) return null;
  return {
    keyId: row.id,
    projectId: row.project_id,
    mode: row.mode,
    accountId: row.account_id,
    scopes: row.scopes.split(",") as Scope[],
    approved: row.approved === 1,
    lastUsedAt: row.last_used_at,
  };
}

/** Records use at most once a minute per key, so the hot path does not write on every request. */
export async function touchApiKey(db: Db, caller: KeyCaller, now: number): Promise<void> {
  if (caller.lastUsedAt && Date.parse(caller.lastUsedAt) > now - MINUTE) return;
  await db.prepare("UPDATE api_keys SET last_used_at = ? WHERE id = ?").bind(isoTime(now), caller.keyId).run();
}
