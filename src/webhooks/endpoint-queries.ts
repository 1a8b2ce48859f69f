import { type Db, IN_JSON_LIST } from "../lib/db";
import { modeParam, type Tenant } from "../lib/tenant";
import type { EndpointRow } from "./model";

/**
 * Adds the endpoint unless the project already has `quota` of them in its mode (a test endpoint
 * takes no room from live ones); the count and the insert are one statement, so concurrent creates
 * cannot pass the quota together. False when it is full.
 */
export async function insertEndpoint(db: Db, row: EndpointRow, quota: number): Promise<boolean> {
  const result = await db
    .prepare(
      `INSERT INTO webhook_endpoints (id, project_id, livemode, url, event_types, enabled, description, secret,
         created_at)
       SELECT ?1, ?2, ?10, ?3, ?4, ?5, ?6, ?7, ?8
       WHERE (SELECT count(*) FROM webhook_endpoints WHERE project_id = ?2 AND livemode = ?10) < ?9`,
    )
    .bind(
      row.id,
      row.project_id,
      row.url,
      row.event_types,
      row.enabled,
      row.description,
      row.secret,
      row.created_at,
      quota,
      row.livemode,
    )
    .run();
  return result.meta.changes > 0;
}

export type EndpointPatch = {
  url?: string | undefined;
  eventTypes?: string[] | undefined;
  /** Absent: unchanged; null clears it. */
  description?: string | null | undefined;
  enabled?: boolean | undefined;
};

/**
 * Applies a patch in one statement. Enabling clears `disabled_reason`; disabling records "manual"
 * unless the endpoint was disabled already (a "gone" endpoint stays "gone").
 */
export function updateEndpoint(db: Db, tenant: Tenant, id: string, patch: EndpointPatch): Promise<EndpointRow | null> {
  const enabled = patch.enabled === undefined ? null : patch.enabled ? 1 : 0;
  return db
    .prepare(
      `UPDATE webhook_endpoints
       SET url = coalesce(?3, url),
           event_types = coalesce(?4, event_types),
           description = CASE WHEN ?5 THEN ?6 ELSE description END,
           disabled_reason = CASE
             WHEN ?7 IS NULL THEN disabled_reason
             WHEN ?7 = 1 THEN NULL
             WHEN enabled = 0 THEN coalesce(disabled_reason, 'manual')
             ELSE 'manual' END,
           enabled = coalesce(?7, enabled)
       WHERE id = ?1 AND project_id = ?2 AND livemode = coalesce(?8, livemode)
       RETURNING *`,
    )
    .bind(
      id,
      tenant.projectId,
      patch.url ?? null,
      patch.eventTypes ? JSON.stringify(patch.eventTypes) : null,
      patch.description === undefined ? 0 : 1,
      patch.description ?? null,
      enabled,
      modeParam(tenant),
    )
    .first<EndpointRow>();
}

/** Makes `secret` the endpoint's secret; the one it replaces keeps signing until `overlapUntil`. */
export async function rotateSecret(
  db: Db,
  tenant: Tenant,
  id: string,
  secret: string,
  overlapUntil: string,
): Promise<boolean> {
  const result = await db
    .prepare(
      `UPDATE webhook_endpoints SET previous_secret = secret, previous_secret_until = ?3, secret = ?4
       WHERE id = ?1 AND project_id = ?2 AND livemode = coalesce(?5, livemode)`,
    )
    .bind(id, tenant.projectId, overlapUntil, secret, modeParam(tenant))
    .run();
  return result.meta.changes > 0;
}

/**
 * Disables an endpoint that said it is gone (410).
 *
 * @allModes delivery disables the endpoint its attempt names (410 Gone), whatever its mode
 */
export function disableGoneStatement(db: Db, id: string): D1PreparedStatement {
  return db.prepare("UPDATE webhook_endpoints SET enabled = 0, disabled_reason = 'gone' WHERE id = ?").bind(id);
}

/**
 * The tenant's endpoints, newest first. A project has at most 20 per mode, so one mode's are
 * picked from the project's few rows without an index of their own.
 */
export async function listEndpoints(db: Db, tenant: Tenant): Promise<EndpointRow[]> {
  const { results } = await db
    .prepare(
      `SELECT * FROM webhook_endpoints WHERE project_id = ? AND livemode = coalesce(?, livemode)
       ORDER BY created_at DESC, id DESC`,
    )
    .bind(tenant.projectId, modeParam(tenant))
    .all<EndpointRow>();
  return results;
}

/** The tenant's endpoint `id`: a statement, so that a batch can read it with something else. */
export function endpointStatement(db: Db, tenant: Tenant, id: string): D1PreparedStatement {
  return db
    .prepare("SELECT * FROM webhook_endpoints WHERE id = ? AND project_id = ? AND livemode = coalesce(?, livemode)")
    .bind(id, tenant.projectId, modeParam(tenant));
}

export function findEndpoint(db: Db, tenant: Tenant, id: string): Promise<EndpointRow | null> {
  return endpointStatement(db, tenant, id).first<EndpointRow>();
}

/** Deletes the endpoint and, with it, its delivery attempts. */
export async function deleteEndpoint(db: Db, tenant: Tenant, id: string): Promise<boolean> {
  const result = await db
    .prepare("DELETE FROM webhook_endpoints WHERE id = ? AND project_id = ? AND livemode = coalesce(?, livemode)")
    .bind(id, tenant.projectId, modeParam(tenant))
    .run();
  return result.meta.changes > 0;
}

/**
 * Enabled endpoints of these projects, of both modes (the subscriber gives each event to its own
 * mode's); a deleted project's endpoints get no new attempts.
 *
 * @allModes the subscriber gives each event to its own mode's endpoints among these (subscriber.ts)
 */
export async function enabledEndpoints(db: Db, projectIds: string[]): Promise<EndpointRow[]> {
  const { results } = await db
    .prepare(
      `SELECT e.* FROM webhook_endpoints e JOIN projects p ON p.id = e.project_id
       WHERE e.enabled = 1 AND p.deleted_at IS NULL AND e.project_id IN (${IN_JSON_LIST})`,
    )
    .bind(JSON.stringify(projectIds))
    .all<EndpointRow>();
  return results;
}
