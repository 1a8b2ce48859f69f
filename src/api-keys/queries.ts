import type { Scope } from "../auth/context";
import { sha256Hex } from "../lib/crypto";
import type { Db } from "../lib/db";
import type { Mode } from "../lib/tenant";
import { isoTime } from "../lib/time";

type ApiKeyRow = {
  id: string;
  project_id: string;
  name: string;
  scopes: string;
  mode: Mode;
  created_at: string;
  last_used_at: string | null;
};

export type ApiKey = {
  id: string;
  name: string;
  scopes: Scope[];
  mode: Mode;
  createdAt: string;
  lastUsedAt: string | null;
};

function toApiKey(row: ApiKeyRow): ApiKey {
  return {
    id: row.id,
    name: row.name,
    scopes: row.scopes.split(",") as Scope[],
    mode: row.mode,
    createdAt: row.created_at,
    lastUsedAt: row.last_used_at,
  };
}

/** Adds a key unless the project already has `quota` unrevoked ones; null when it is full. */
export async function insertApiKey(
  db: Db,
  input: { id: string; projectId: string; name: string; scopes: Scope[]; mode: Mode; key: string; now: number },
  quota: number,
): Promise<ApiKey | null> {
  // The count and the insert are one statement, so concurrent creates cannot pass the quota.
  const row = await db
    .prepare(
      `INSERT INTO api_keys (id, project_id, name, scopes, mode, key_hash, created_at)
       SELECT ?1, ?2, ?3, ?4, ?5, ?6, ?7
       WHERE (SELECT count(*) FROM api_keys WHERE project_id = ?2 AND revoked_at IS NULL) < ?8
       RETURNING *`,
    )
    .bind(
      input.id,
      input.projectId,
      input.name,
      input.scopes.join(","),
      input.mode,
      await sha256Hex(input.key),
      isoTime(input.now),
      quota,
    )
    .first<ApiKeyRow>();
  return row ? toApiKey(row) : null;
}

export async function listApiKeys(db: Db, projectId: string): Promise<ApiKey[]> {
  const { results } = await db
    .prepare("SELECT * FROM api_keys WHERE project_id = ? AND revoked_at IS NULL ORDER BY created_at DESC, id DESC")
    .bind(projectId)
    .all<ApiKeyRow>();
  return results.map(toApiKey);
}

/** Revokes the key; false when the project has no such live key. */
export async function revokeApiKey(db: Db, projectId: string, keyId: string, now: number): Promise<boolean> {
  const result = await db
    .prepare("UPDATE api_keys SET revoked_at = ? WHERE id = ? AND project_id = ? AND revoked_at IS NULL")
    .bind(isoTime(now), keyId, projectId)
    .run();
  return result.meta.changes > 0;
}
