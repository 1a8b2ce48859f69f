import type { Db } from "../lib/db";
import { isoTime, MINUTE } from "../lib/time";
import { monotonicUlids } from "../lib/ulid";
import { enqueue } from "./delivery-queue";
import type { EventType } from "./model";
import {
  enabledEndpoints,
  insertAttempts,
  markPublished,
  type NewAttempt,
  pendingAttempts,
  unpublishedEvents,
} from "./queries";

export type Bindings = { db: Db; queue: Queue };

/**
 * Moves outbox events on to delivery: writes the first attempt of each event to every enabled
 * endpoint of its project subscribed to its type, sends those attempts to the queue, then marks
 * the events published. Each step can be repeated safely: attempts are unique per event, endpoint
 * and number, and the consumer delivers an attempt only while it is pending. A crash between the
 * steps leaves the event unpublished, and the scheduled sweep publishes it again.
 */
export async function publishEvents(
  bindings: Bindings,
  which: { ids: string[] } | { createdBefore: string },
  now: number = Date.now(),
): Promise<void> {
  const events = await unpublishedEvents(bindings.db, which);
  if (events.length === 0) return;
  const nextId = monotonicUlids();
  const endpoints = await enabledEndpoints(bindings.db, [...new Set(events.map((event) => event.project_id))]);
  const attempts: NewAttempt[] = events.flatMap((event) =>
    endpoints
      .filter((endpoint) => endpoint.project_id === event.project_id)
      .filter((endpoint) => (JSON.parse(endpoint.event_types) as EventType[]).some((type) => type === event.type))
      .map((endpoint) => ({
        id: nextId(now),
        endpointId: endpoint.id,
        eventId: event.id,
        eventType: event.type,
        attempt: 1,
        dueAt: isoTime(now),
      })),
  );
  const eventIds = events.map((event) => event.id);
  if (attempts.length > 0) {
    await insertAttempts(bindings.db, attempts, now).run();
    await enqueue(bindings.queue, await pendingAttempts(bindings.db, { eventIds }));
  }
  await markPublished(bindings.db, eventIds, now).run();
}

/**
 * How long past due a pending attempt that no consumer holds may wait before its message is taken
 * as lost. Sending one again is harmless: the consumer claims an attempt before sending it, so a
 * duplicate message finds it held or done.
 */
const LOST_AFTER_MS = MINUTE;

/**
 * The scheduled safety net: publishes events the request did not get to, and sends again the
 * pending attempts whose message was lost.
 */
export async function sweepOutbox(bindings: Bindings, now: number = Date.now()): Promise<void> {
  await publishEvents(bindings, { createdBefore: isoTime(now - MINUTE) }, now);
  const lost = await pendingAttempts(bindings.db, { dueBefore: isoTime(now - LOST_AFTER_MS), now: isoTime(now) });
  await enqueue(bindings.queue, lost);
}
