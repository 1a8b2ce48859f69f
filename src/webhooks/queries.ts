import type { Position } from "../lib/cursor";
import { type Db, IN_JSON_LIST } from "../lib/db";
import { isoTime } from "../lib/time";
import type { DeliveryError, DeliveryRow, DeliveryState, EndpointRow } from "./model";

/**
 * Adds the endpoint unless the project already has `quota` of them; the count and the insert are
 * one statement, so concurrent creates cannot pass the quota together. False when it is full.
 */
export async function insertEndpoint(db: Db, row: EndpointRow, quota: number): Promise<boolean> {
  const result = await db
    .prepare(
      `INSERT INTO webhook_endpoints (id, project_id, url, event_types, enabled, description, secret, created_at)
       SELECT ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8
       WHERE (SELECT count(*) FROM webhook_endpoints WHERE project_id = ?2) < ?9`,
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
export function updateEndpoint(
  db: Db,
  projectId: string,
  id: string,
  patch: EndpointPatch,
): Promise<EndpointRow | null> {
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
       WHERE id = ?1 AND project_id = ?2
       RETURNING *`,
    )
    .bind(
      id,
      projectId,
      patch.url ?? null,
      patch.eventTypes ? JSON.stringify(patch.eventTypes) : null,
      patch.description === undefined ? 0 : 1,
      patch.description ?? null,
      enabled,
    )
    .first<EndpointRow>();
}

/** Makes `secret` the endpoint's secret; the one it replaces keeps signing until `overlapUntil`. */
export async function rotateSecret(
  db: Db,
  projectId: string,
  id: string,
  secret: string,
  overlapUntil: string,
): Promise<boolean> {
  const result = await db
    .prepare(
      `UPDATE webhook_endpoints SET previous_secret = secret, previous_secret_until = ?3, secret = ?4
       WHERE id = ?1 AND project_id = ?2`,
    )
    .bind(id, projectId, overlapUntil, secret)
    .run();
  return result.meta.changes > 0;
}

/** Disables an endpoint that said it is gone (410). */
export function disableGone(db: Db, id: string): D1PreparedStatement {
  return db.prepare("UPDATE webhook_endpoints SET enabled = 0, disabled_reason = 'gone' WHERE id = ?").bind(id);
}

export async function listEndpoints(db: Db, projectId: string): Promise<EndpointRow[]> {
  const { results } = await db
    .prepare("SELECT * FROM webhook_endpoints WHERE project_id = ? ORDER BY created_at DESC, id DESC")
    .bind(projectId)
    .all<EndpointRow>();
  return results;
}

/** The project's endpoint `id`: a statement, so that a batch can read it with something else. */
function endpointStatement(db: Db, projectId: string, id: string): D1PreparedStatement {
  return db.prepare("SELECT * FROM webhook_endpoints WHERE id = ? AND project_id = ?").bind(id, projectId);
}

export function findEndpoint(db: Db, projectId: string, id: string): Promise<EndpointRow | null> {
  return endpointStatement(db, projectId, id).first<EndpointRow>();
}

/** Deletes the endpoint and, with it, its delivery attempts. */
export async function deleteEndpoint(db: Db, projectId: string, id: string): Promise<boolean> {
  const result = await db
    .prepare("DELETE FROM webhook_endpoints WHERE id = ? AND project_id = ?")
    .bind(id, projectId)
    .run();
  return result.meta.changes > 0;
}

export type DeliveryFilter = { state?: DeliveryState | undefined; eventType?: string | undefined };

/**
 * The page query for a filter: built from the filters given rather than `(? IS NULL OR …)` guards,
 * so each shape is one seek on the index that leads with its filters in the listing order.
 */
export function deliveriesQuery(
  endpointId: string,
  filter: DeliveryFilter,
  limit: number,
  after: Position | null,
): { sql: string; params: unknown[] } {
  const where = ["endpoint_id = ?"];
  const params: unknown[] = [endpointId];
  if (filter.state !== undefined) {
    where.push("state = ?");
    params.push(filter.state);
  }
  if (filter.eventType !== undefined) {
    where.push("event_type = ?");
    params.push(filter.eventType);
  }
  if (after) {
    where.push("(created_at, id) < (?, ?)");
    params.push(after.createdAt, after.id);
  }
  params.push(limit + 1);
  return {
    sql: `SELECT * FROM webhook_deliveries WHERE ${where.join(" AND ")} ORDER BY created_at DESC, id DESC LIMIT ?`,
    params,
  };
}

/**
 * The project's endpoint and `limit + 1` of its attempts after `after`, newest first, in one round
 * trip. A null endpoint means it is not the project's: the attempts read with it are dropped here
 * and never leave this function.
 */
export async function endpointDeliveries(
  db: Db,
  projectId: string,
  endpointId: string,
  filter: DeliveryFilter,
  limit: number,
  after: Position | null,
): Promise<{ endpoint: EndpointRow | null; rows: DeliveryRow[] }> {
  const { sql, params } = deliveriesQuery(endpointId, filter, limit, after);
  const [endpoint, page] = await db.batch([
    endpointStatement(db, projectId, endpointId),
    db.prepare(sql).bind(...params),
  ]);
  const row = (endpoint?.results[0] as EndpointRow | undefined) ?? null;
  return { endpoint: row, rows: row ? ((page?.results ?? []) as DeliveryRow[]) : [] };
}

export function findDelivery(db: Db, endpointId: string, id: string): Promise<DeliveryRow | null> {
  return db
    .prepare("SELECT * FROM webhook_deliveries WHERE id = ? AND endpoint_id = ?")
    .bind(id, endpointId)
    .first<DeliveryRow>();
}

export type NewAttempt = {
  id: string;
  endpointId: string;
  eventId: string;
  eventType: string;
  attempt: number;
  dueAt: string;
};

/** Writes pending attempts, skipping any that exist already; one statement for any number. */
export function insertAttempts(db: Db, attempts: NewAttempt[], now: number): D1PreparedStatement {
  return db
    .prepare(
      `INSERT OR IGNORE INTO webhook_deliveries (id, endpoint_id, event_id, event_type, state, attempt, created_at, due_at)
       SELECT json_extract(value, '$.id'), json_extract(value, '$.endpointId'), json_extract(value, '$.eventId'),
              json_extract(value, '$.eventType'), 'pending', json_extract(value, '$.attempt'), ?1,
              json_extract(value, '$.dueAt')
       FROM json_each(?2)`,
    )
    .bind(isoTime(now), JSON.stringify(attempts));
}

/**
 * Writes the next attempt of an attempt's event to its endpoint, numbered inside the statement so
 * concurrent retries each get their own number.
 */
export function insertRetryAttempt(
  db: Db,
  original: DeliveryRow,
  id: string,
  now: number,
): Promise<DeliveryRow | null> {
  return db
    .prepare(
      `INSERT INTO webhook_deliveries (id, endpoint_id, event_id, event_type, state, attempt, created_at, due_at)
       SELECT ?1, ?2, ?3, ?4, 'pending', coalesce(max(attempt), 0) + 1, ?5, ?5
       FROM webhook_deliveries WHERE endpoint_id = ?2 AND event_id = ?3
       RETURNING *`,
    )
    .bind(id, original.endpoint_id, original.event_id, original.event_type, isoTime(now))
    .first<DeliveryRow>();
}

/** What a delivery message names: the attempt, its endpoint and the endpoint's project. */
export type PendingAttempt = { deliveryId: string; endpointId: string; projectId: string };
const PENDING_COLUMNS = `d.id AS deliveryId, d.endpoint_id AS endpointId, e.project_id AS projectId
  FROM webhook_deliveries d JOIN webhook_endpoints e ON e.id = d.endpoint_id`;

/**
 * Pending attempts among these events' first attempts, or due before `dueBefore` and held by no
 * consumer (their message was lost), as the messages that deliver them.
 */
export async function pendingAttempts(
  db: Db,
  where: { eventIds: string[] } | { dueBefore: string; now: string },
): Promise<PendingAttempt[]> {
  const statement =
    "eventIds" in where
      ? db
          .prepare(
            `SELECT ${PENDING_COLUMNS}
             WHERE d.state = 'pending' AND d.attempt = 1 AND d.event_id IN (${IN_JSON_LIST})`,
          )
          .bind(JSON.stringify(where.eventIds))
      : db
          .prepare(
            `SELECT ${PENDING_COLUMNS}
             WHERE d.state = 'pending' AND d.due_at < ?1 AND (d.claimed_until IS NULL OR d.claimed_until < ?2)
             ORDER BY d.due_at LIMIT 500`,
          )
          .bind(where.dueBefore, where.now);
  return (await statement.all<PendingAttempt>()).results;
}

export type OutboxEvent = { id: string; project_id: string; type: string };

/** Unpublished events: these ids, or any created before `createdBefore`; oldest first. */
export async function unpublishedEvents(
  db: Db,
  where: { ids: string[] } | { createdBefore: string },
): Promise<OutboxEvent[]> {
  const statement =
    "ids" in where
      ? db
          .prepare(
            `SELECT id, project_id, type FROM outbox_events WHERE published_at IS NULL AND id IN (${IN_JSON_LIST})`,
          )
          .bind(JSON.stringify(where.ids))
      : db
          .prepare(
            "SELECT id, project_id, type FROM outbox_events WHERE published_at IS NULL AND created_at < ? ORDER BY created_at LIMIT 100",
          )
          .bind(where.createdBefore);
  return (await statement.all<OutboxEvent>()).results;
}

/** Enabled endpoints of these projects; a deleted project's endpoints get no new attempts. */
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

export function markPublished(db: Db, eventIds: string[], now: number): D1PreparedStatement {
  return db
    .prepare(`UPDATE outbox_events SET published_at = ? WHERE published_at IS NULL AND id IN (${IN_JSON_LIST})`)
    .bind(isoTime(now), JSON.stringify(eventIds));
}

export type ClaimedAttempt = DeliveryRow & {
  project_id: string;
  url: string;
  secret: string;
  previous_secret: string | null;
  previous_secret_until: string | null;
  endpoint_enabled: number;
  /** 1 while the endpoint's project is not deleted. */
  project_live: number | null;
  account_approved: number;
  payload: string;
};

/**
 * Takes a pending attempt for delivery for `leaseMs`; null when it is done or held by another.
 * Returns, in the same round trip, what decides whether it may be sent: the endpoint's URL,
 * secrets and state, whether its project is deleted, and whether the project's account is approved.
 */
export function claimAttempt(db: Db, id: string, now: number, leaseMs: number): Promise<ClaimedAttempt | null> {
  return db
    .prepare(
      `UPDATE webhook_deliveries SET claimed_until = ?1
       WHERE id = ?2 AND state = 'pending' AND (claimed_until IS NULL OR claimed_until < ?3)
       RETURNING *,
         (SELECT project_id FROM webhook_endpoints WHERE id = endpoint_id) AS project_id,
         (SELECT url FROM webhook_endpoints WHERE id = endpoint_id) AS url,
         (SELECT secret FROM webhook_endpoints WHERE id = endpoint_id) AS secret,
         (SELECT previous_secret FROM webhook_endpoints WHERE id = endpoint_id) AS previous_secret,
         (SELECT previous_secret_until FROM webhook_endpoints WHERE id = endpoint_id) AS previous_secret_until,
         (SELECT enabled FROM webhook_endpoints WHERE id = endpoint_id) AS endpoint_enabled,
         (SELECT p.deleted_at IS NULL FROM webhook_endpoints e JOIN projects p ON p.id = e.project_id
            WHERE e.id = endpoint_id) AS project_live,
         (SELECT a.approved FROM webhook_endpoints e JOIN projects p ON p.id = e.project_id
            JOIN accounts a ON a.id = p.account_id WHERE e.id = endpoint_id) AS account_approved,
         (SELECT payload FROM outbox_events WHERE id = event_id) AS payload`,
    )
    .bind(isoTime(now + leaseMs), id, isoTime(now))
    .first<ClaimedAttempt>();
}

export function finishAttempt(
  db: Db,
  id: string,
  outcome: {
    state: "succeeded" | "failed";
    responseStatus: number | null;
    error: DeliveryError | null;
    durationMs: number | null;
    nextRetryAt: string | null;
  },
  now: number,
): D1PreparedStatement {
  return db
    .prepare(
      `UPDATE webhook_deliveries
       SET state = ?1, response_status = ?2, error = ?3, duration_ms = ?4, completed_at = ?5, next_retry_at = ?6,
           claimed_until = NULL
       WHERE id = ?7 AND state = 'pending'`,
    )
    .bind(
      outcome.state,
      outcome.responseStatus,
      outcome.error,
      outcome.durationMs,
      isoTime(now),
      outcome.nextRetryAt,
      id,
    );
}

/** Fails an attempt whose message used up the queue's retries (the dead-letter queue has it). */
export function giveUpAttempt(db: Db, id: string, now: number): D1PreparedStatement {
  return db
    .prepare(
      `UPDATE webhook_deliveries
       SET state = 'failed', error = 'gave_up', completed_at = ?2, next_retry_at = NULL, claimed_until = NULL
       WHERE id = ?1 AND state = 'pending'`,
    )
    .bind(id, isoTime(now));
}

/** Deletes up to `limit` attempts created before `before`; how many it deleted. */
export async function deleteAttemptsBefore(db: Db, before: string, limit: number): Promise<number> {
  const result = await db
    .prepare(
      `DELETE FROM webhook_deliveries
       WHERE id IN (SELECT id FROM webhook_deliveries WHERE created_at < ? ORDER BY created_at LIMIT ?)`,
    )
    .bind(before, limit)
    .run();
  return result.meta.changes;
}

/** Deletes up to `limit` events published before `before` that no attempt refers to any more. */
export async function deleteEventsBefore(db: Db, before: string, limit: number): Promise<number> {
  const result = await db
    .prepare(
      `DELETE FROM outbox_events WHERE id IN (
         SELECT id FROM outbox_events o
         WHERE published_at IS NOT NULL AND published_at < ?
           AND NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.event_id = o.id)
         ORDER BY published_at LIMIT ?)`,
    )
    .bind(before, limit)
    .run();
  return result.meta.changes;
}
