import type { Position } from "../lib/cursor";
import { isoTime } from "../lib/time";
import type { DeliveryRow, DeliveryState, EndpointRow } from "./model";

const IDS = "SELECT value FROM json_each(?)";

export async function insertEndpoint(db: D1Database, row: EndpointRow): Promise<void> {
  await db
    .prepare(
      `INSERT INTO webhook_endpoints (id, project_id, url, event_types, enabled, description, secret, created_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
    )
    .bind(row.id, row.project_id, row.url, row.event_types, row.enabled, row.description, row.secret, row.created_at)
    .run();
}

export async function listEndpoints(db: D1Database, projectId: string): Promise<EndpointRow[]> {
  const { results } = await db
    .prepare("SELECT * FROM webhook_endpoints WHERE project_id = ? ORDER BY created_at DESC, id DESC")
    .bind(projectId)
    .all<EndpointRow>();
  return results;
}

export function findEndpoint(db: D1Database, projectId: string, id: string): Promise<EndpointRow | null> {
  return db
    .prepare("SELECT * FROM webhook_endpoints WHERE id = ? AND project_id = ?")
    .bind(id, projectId)
    .first<EndpointRow>();
}

/** Deletes the endpoint and, with it, its delivery attempts. */
export async function deleteEndpoint(db: D1Database, projectId: string, id: string): Promise<boolean> {
  const result = await db
    .prepare("DELETE FROM webhook_endpoints WHERE id = ? AND project_id = ?")
    .bind(id, projectId)
    .run();
  return result.meta.changes > 0;
}

export type DeliveryFilter = { state?: DeliveryState | undefined; eventType?: string | undefined };

/** `limit + 1` attempts of the endpoint after `after`, newest first. */
export async function listDeliveries(
  db: D1Database,
  endpointId: string,
  filter: DeliveryFilter,
  limit: number,
  after: Position | null,
): Promise<DeliveryRow[]> {
  const { results } = await db
    .prepare(
      `SELECT * FROM webhook_deliveries
       WHERE endpoint_id = ?1 AND (?2 IS NULL OR state = ?2) AND (?3 IS NULL OR event_type = ?3)
         AND (?4 IS NULL OR (created_at, id) < (?4, ?5))
       ORDER BY created_at DESC, id DESC LIMIT ?6`,
    )
    .bind(
      endpointId,
      filter.state ?? null,
      filter.eventType ?? null,
      after?.createdAt ?? null,
      after?.id ?? null,
      limit + 1,
    )
    .all<DeliveryRow>();
  return results;
}

export function findDelivery(db: D1Database, endpointId: string, id: string): Promise<DeliveryRow | null> {
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
export function insertAttempts(db: D1Database, attempts: NewAttempt[], now: number): D1PreparedStatement {
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
  db: D1Database,
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

/** Pending attempts among these events' first attempts, or due long ago (their message was lost). */
export async function pendingAttemptIds(
  db: D1Database,
  where: { eventIds: string[] } | { dueBefore: string },
): Promise<string[]> {
  const statement =
    "eventIds" in where
      ? db
          .prepare(`SELECT id FROM webhook_deliveries WHERE state = 'pending' AND attempt = 1 AND event_id IN (${IDS})`)
          .bind(JSON.stringify(where.eventIds))
      : db
          .prepare("SELECT id FROM webhook_deliveries WHERE state = 'pending' AND due_at < ? ORDER BY due_at LIMIT 500")
          .bind(where.dueBefore);
  return (await statement.all<{ id: string }>()).results.map((row) => row.id);
}

export type OutboxEvent = { id: string; project_id: string; type: string };

/** Unpublished events: these ids, or any created before `createdBefore`; oldest first. */
export async function unpublishedEvents(
  db: D1Database,
  where: { ids: string[] } | { createdBefore: string },
): Promise<OutboxEvent[]> {
  const statement =
    "ids" in where
      ? db
          .prepare(`SELECT id, project_id, type FROM outbox_events WHERE published_at IS NULL AND id IN (${IDS})`)
          .bind(JSON.stringify(where.ids))
      : db
          .prepare(
            "SELECT id, project_id, type FROM outbox_events WHERE published_at IS NULL AND created_at < ? ORDER BY created_at LIMIT 100",
          )
          .bind(where.createdBefore);
  return (await statement.all<OutboxEvent>()).results;
}

/** Enabled endpoints of these projects. */
export async function enabledEndpoints(db: D1Database, projectIds: string[]): Promise<EndpointRow[]> {
  const { results } = await db
    .prepare(`SELECT * FROM webhook_endpoints WHERE enabled = 1 AND project_id IN (${IDS})`)
    .bind(JSON.stringify(projectIds))
    .all<EndpointRow>();
  return results;
}

export function markPublished(db: D1Database, eventIds: string[], now: number): D1PreparedStatement {
  return db
    .prepare(`UPDATE outbox_events SET published_at = ? WHERE published_at IS NULL AND id IN (${IDS})`)
    .bind(isoTime(now), JSON.stringify(eventIds));
}

export type ClaimedAttempt = DeliveryRow & { url: string; secret: string; payload: string };

/** Takes a pending attempt for delivery for `leaseMs`; null when it is done or held by another. */
export function claimAttempt(db: D1Database, id: string, now: number, leaseMs: number): Promise<ClaimedAttempt | null> {
  return db
    .prepare(
      `UPDATE webhook_deliveries SET claimed_until = ?1
       WHERE id = ?2 AND state = 'pending' AND (claimed_until IS NULL OR claimed_until < ?3)
       RETURNING *,
         (SELECT url FROM webhook_endpoints WHERE id = endpoint_id) AS url,
         (SELECT secret FROM webhook_endpoints WHERE id = endpoint_id) AS secret,
         (SELECT payload FROM outbox_events WHERE id = event_id) AS payload`,
    )
    .bind(isoTime(now + leaseMs), id, isoTime(now))
    .first<ClaimedAttempt>();
}

export function finishAttempt(
  db: D1Database,
  id: string,
  outcome: {
    state: "succeeded" | "failed";
    responseStatus: number | null;
    error: string | null;
    durationMs: number;
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
