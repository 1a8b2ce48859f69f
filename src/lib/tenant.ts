import type { Condition } from "./db";

/**
 * Test mode (docs/api-guide.md#test-mode-and-going-live). Every video (with its uploads,
 * thumbnails, tokens and events) and every webhook endpoint (with its delivery attempts) belongs to
 * one mode: the mode of the API key that created it (`svc_live_…` live, `svc_test_…` test). Stored
 * as the `livemode` column (1 live, 0 test) of `videos`, `tus_uploads`, `webhook_endpoints` and
 * `outbox_events`.
 */
export const MODES = ["live", "test"] as const;
export type Mode = (typeof MODES)[number];

/**
 * The tables whose rows have a mode of their own. Every statement on them binds one
 * (scripts/mode-scoping.mjs checks the query modules; test/modes/ the statements requests run).
 * Outbox events take their video's; delivery attempts and upload parts go with their endpoint's
 * and video's.
 */
export const MODE_TABLES = ["videos", "tus_uploads", "webhook_endpoints"] as const;

export function isMode(value: unknown): value is Mode {
  return value === "live" || value === "test";
}

/**
 * Whose objects a statement may touch: one project's, in one mode (an API key's own, or a session
 * cookie's that asked for one with `?mode=`), or in both (`"both"`: a session cookie that did not
 * narrow, or work done for one object by its own id, such as a tus upload URL's). Query functions
 * that act for a caller take this, never a bare project id, so no route can forget the mode.
 */
export type Tenant = { readonly projectId: string; readonly mode: Mode | "both" };

/** The `livemode` column's value for a mode. */
export function livemodeOf(mode: Mode): 0 | 1 {
  return mode === "live" ? 1 : 0;
}

/** The mode a `livemode` column's value stands for. */
export function modeOf(livemode: number): Mode {
  return livemode === 1 ? "live" : "test";
}

/** The mode of what a tenant creates: its own, or live for a session cookie that did not narrow. */
export function creationMode(tenant: Tenant): Mode {
  return tenant.mode === "both" ? "live" : tenant.mode;
}

/**
 * The value of the one mode predicate of statements that find rows by id,
 * `livemode = coalesce(?, livemode)`: the tenant's mode, or null for both. (By id the primary key
 * finds the row; the predicate only keeps the other mode's out.)
 */
export function modeParam(tenant: Tenant): 0 | 1 | null {
  return tenant.mode === "both" ? null : livemodeOf(tenant.mode);
}

/**
 * The mode condition of a listing: `livemode = ?` for one mode, none for both, so that each shape
 * is one seek on the index that leads with its filters (`project_id, livemode, created_at` for one
 * mode, `project_id, created_at` for both) rather than a `(? IS NULL OR …)` guard.
 */
export function modeConditions(tenant: Tenant, column = "livemode"): Condition[] {
  return tenant.mode === "both" ? [] : [{ sql: `${column} = ?`, params: [livemodeOf(tenant.mode)] }];
}
