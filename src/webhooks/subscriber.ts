import type { Db } from "../lib/db";
import { isoTime, MINUTE } from "../lib/time";
import { monotonicUlids } from "../lib/ulid";
import type { Subscriber } from "../outbox/publish";
import { insertAttemptsStatement, type NewAttempt, pendingAttempts } from "./attempt-queries";
import { enqueue } from "./delivery-queue";
import { enabledEndpoints } from "./endpoint-queries";
import { EVENT_TYPES } from "./events";
import { subscribedTypes } from "./model";

export type Bindings = { db: Db; queue: Queue };

/**
 * Webhook delivery as an event subscriber: the first attempt of each event to every enabled
 * endpoint of its project and its mode (a test video's events go to test endpoints only, a live
 * one's to live endpoints only: docs/api-guide.md#test-mode-and-going-live) subscribed to its type,
 * written, then sent to the delivery queue. Safe to repeat: attempts are unique per event, endpoint
 * and number, and the consumer delivers an attempt only while it is pending.
 */
export function webhookSubscriber(bindings: Bindings): Subscriber {
  return {
    name: "webhooks",
    types: EVENT_TYPES,
    async take(events, now) {
      const nextId = monotonicUlids();
      const endpoints = await enabledEndpoints(bindings.db, [...new Set(events.map((event) => event.project_id))]);
      const attempts: NewAttempt[] = events.flatMap((event) =>
        endpoints
          .filter((endpoint) => endpoint.project_id === event.project_id && endpoint.livemode === event.livemode)
          .filter((endpoint) => (subscribedTypes(endpoint) as readonly string[]).includes(event.type))
          .map((endpoint) => ({
            id: nextId(now),
            endpointId: endpoint.id,
            eventId: event.id,
            eventType: event.type,
            attempt: 1,
            dueAt: isoTime(now),
          })),
      );
      if (attempts.length === 0) return;
      await insertAttemptsStatement(bindings.db, attempts, now).run();
      const eventIds = events.map((event) => event.id);
      await enqueue(bindings.queue, await pendingAttempts(bindings.db, { eventIds }));
    },
  };
}

/**
 * How long past due a pending attempt that no consumer holds may wait before its message is taken
 * as lost. Sending one again is harmless: the consumer claims an attempt before sending it, so a
 * duplicate message finds it held or done.
 */
const LOST_AFTER_MS = MINUTE;

/** The scheduled safety net of delivery: sends again the pending attempts whose message was lost. */
export async function sendLostAttempts(bindings: Bindings, now: number = Date.now()): Promise<void> {
  const lost = await pendingAttempts(bindings.db, { dueBefore: isoTime(now - LOST_AFTER_MS), now: isoTime(now) });
  await enqueue(bindings.queue, lost);
}
