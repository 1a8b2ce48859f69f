import type { Db } from "../lib/db";
import { isoTime, MINUTE } from "../lib/time";
import { markPublishedStatement, type OutboxEvent, unpublishedEvents } from "./queries";

/**
 * Who takes events from the outbox (src/subscribers.ts lists them: webhook delivery). A
 * subscriber's `take` must be safe to repeat with the same events: a crash after it and before the
 * events are marked published makes the sweep give them again.
 */
export type Subscriber = {
  name: string;
  types: readonly string[];
  take(events: OutboxEvent[], now: number): Promise<void>;
};

export type Publisher = { db: Db; subscribers: readonly Subscriber[] };

/**
 * Hands unpublished events (these ids, or every one created before a time) to each subscriber of
 * their type, then marks them published. A subscriber that throws leaves them unpublished, for the
 * scheduled sweep to give again.
 */
export async function publishEvents(
  publisher: Publisher,
  which: { ids: string[] } | { createdBefore: string },
  now: number = Date.now(),
): Promise<void> {
  const events = await unpublishedEvents(publisher.db, which);
  if (events.length === 0) return;
  for (const subscriber of publisher.subscribers) {
    const taken = events.filter((event) => subscriber.types.includes(event.type));
    if (taken.length > 0) await subscriber.take(taken, now);
  }
  await markPublishedStatement(
    publisher.db,
    events.map((event) => event.id),
    now,
  ).run();
}

/** The scheduled safety net: publishes the events a minute old that no one published. */
export function sweepUnpublished(publisher: Publisher, now: number = Date.now()): Promise<void> {
  return publishEvents(publisher, { createdBefore: isoTime(now - MINUTE) }, now);
}
