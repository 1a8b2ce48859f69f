import type { Db } from "../lib/db";
import { drain } from "../lib/drain";
import { DAY, isoTime } from "../lib/time";
import { deleteEventsBefore } from "../outbox/queries";
import { deleteAttemptsBefore } from "./attempt-queries";

/** Delivery attempts, and published events no attempt refers to, are kept this long. */
export const RETENTION_MS = 30 * DAY;

/**
 * Deletes delivery attempts older than 30 days, then the published outbox events older than that
 * which no attempt refers to any more, in bounded batches. Unpublished events are never deleted.
 */
export async function deleteExpiredDeliveries(db: Db, now: number = Date.now()) {
  const before = isoTime(now - RETENTION_MS);
  const attempts = await drain((limit) => deleteAttemptsBefore(db, before, limit));
  const events = await drain((limit) => deleteEventsBefore(db, before, limit));
  return { attempts, events };
}
