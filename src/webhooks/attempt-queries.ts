import { type Db, IN_JSON_LIST } from "../lib/db";
import { isoTime } from "../lib/time";
import type { DeliveryError, DeliveryRow } from "./model";

export type NewAttempt = {
  id: string;
  endpointId: string;
  eventId: string;
  eventType: string;
  attempt: number;
  dueAt: string;
};

/** Writes pending attempts, skipping any that exist already; one statement for any number. */
export function insertAttemptsStatement(db: Db, attempts: NewAttempt[], now: number): D1PreparedStatement {
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
 *
 * @allModes delivery sends attempts by id; the event's mode chose their endpoints when they were written
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
 *
 * @allModes delivery sends attempts by id; the event's mode chose their endpoints when they were written
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

export function finishAttemptStatement(
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
export function giveUpAttemptStatement(db: Db, id: string, now: number): D1PreparedStatement {
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
