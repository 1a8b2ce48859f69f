import { type Db, IN_JSON_LIST } from "../lib/db";
import { isoTime } from "../lib/time";

// The outbox knows an event type only by its name: the catalog of types and payloads is
// src/videos/events.ts, above this mechanism.

/**
 * An event as the outbox holds it until its subscribers have it; `livemode` (1 live, 0 test) is its
 * subject video's mode (docs/api-guide.md#test-mode-and-going-live): it goes to that mode's endpoints only.
 */
export type OutboxEvent = { id: string; project_id: string; livemode: number; type: string; subject_id: string };

/**
 * An event to record: its id, what it is about, and its payload as delivered. `occurrence` tells
 * apart the events of one type that one video may have many of (a caption track made, by its
 * generation); the others happen once per video and leave it out.
 */
export type NewEvent = { id: string; type: string; subjectId: string; payload: unknown; occurrence?: string };

/**
 * Records events in the outbox: a statement for the same batch as the change they describe, so an
 * event exists exactly when its change does. Only events whose subject is among `subjects` (a
 * SELECT of ids run inside the batch, after the change) are written, and one per type and subject
 * at most, or per type, subject and occurrence (`INSERT OR IGNORE` on that unique index), so a change
 * that did not happen, or happened before, records nothing. Every event's subject is a video, and the event takes its mode.
 *
 * @allModes an event takes its video's mode, read by id in the same statement
 */
export function recordEventsStatement(
  db: Db,
  projectId: string,
  events: NewEvent[],
  at: string,
  subjects: { sql: string; params: unknown[] },
): D1PreparedStatement {
  const bySubject = Object.fromEntries(events.map((event) => [event.subjectId, event]));
  return db
    .prepare(
      `INSERT OR IGNORE INTO outbox_events (id, project_id, livemode, type, subject_id, payload, created_at, occurrence)
       SELECT json_extract(e.value, '$.id'), ?1, (SELECT v.livemode FROM videos v WHERE v.id = e.key),
              json_extract(e.value, '$.type'), e.key, json(json_extract(e.value, '$.payload')), ?2,
              coalesce(json_extract(e.value, '$.occurrence'), '')
       FROM json_each(?3) e
       WHERE e.key IN (${subjects.sql})`,
    )
    .bind(projectId, at, JSON.stringify(bySubject), ...subjects.params);
}

/** Unpublished events: these ids, or any created before `createdBefore`; oldest first. */
export async function unpublishedEvents(
  db: Db,
  where: { ids: string[] } | { createdBefore: string },
): Promise<OutboxEvent[]> {
  const columns = "id, project_id, livemode, type, subject_id";
  const statement =
    "ids" in where
      ? db
          .prepare(`SELECT ${columns} FROM outbox_events WHERE published_at IS NULL AND id IN (${IN_JSON_LIST})`)
          .bind(JSON.stringify(where.ids))
      : db
          .prepare(
            `SELECT ${columns} FROM outbox_events WHERE published_at IS NULL AND created_at < ? ORDER BY created_at LIMIT 100`,
          )
          .bind(where.createdBefore);
  return (await statement.all<OutboxEvent>()).results;
}

export function markPublishedStatement(db: Db, eventIds: string[], now: number): D1PreparedStatement {
  return db
    .prepare(`UPDATE outbox_events SET published_at = ? WHERE published_at IS NULL AND id IN (${IN_JSON_LIST})`)
    .bind(isoTime(now), JSON.stringify(eventIds));
}

/** Deletes up to `limit` events published before `before` that no delivery attempt refers to any more. */
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
