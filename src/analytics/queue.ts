import { logError } from "../lib/log";
import { logDeadLetters } from "../lib/queue";
import { type BeaconMessage, BeaconMessageSchema } from "./beacon";
import { foldBeacons } from "./fold";
import { foldStatements, readViews } from "./queries";

export const BEACON_QUEUE = "video-beacons";
export const BEACON_DEAD_LETTERS = "video-beacons-dlq";

export function sendBeacon(queue: Queue, message: BeaconMessage): Promise<unknown> {
  return queue.send(message, { contentType: "json" });
}

/**
 * The beacons queue's handler: a whole batch is folded at once (src/analytics/fold.ts) and written
 * in one D1 `batch()`, after one read of the views it names, so D1 sees two round trips per batch
 * however many beacons it holds. A malformed message is logged and dropped; any failure (a view
 * changed by another consumer meanwhile included) throws, and the queue delivers the batch again,
 * which folds to the same result over what is stored then: nothing counts twice.
 */
export async function consumeBeacons(batch: MessageBatch<unknown>, db: D1Database): Promise<void> {
  const messages: BeaconMessage[] = [];
  for (const message of batch.messages) {
    const parsed = BeaconMessageSchema.safeParse(message.body);
    if (parsed.success) messages.push(parsed.data);
    else logError("beacon message malformed", parsed.error.message, { messageId: message.id });
  }
  if (messages.length > 0) {
    const read = await readViews(db, [...new Set(messages.map((m) => m.beacon.viewId))]);
    const statements = foldStatements(db, foldBeacons(read, messages));
    if (statements.length > 0) await db.batch(statements);
  }
  batch.ackAll();
}

/** Beacons whose batch failed every retry: logged and dropped (a view's later beacons carry its totals). */
export function consumeDeadBeacons(batch: MessageBatch<unknown>): void {
  logDeadLetters(batch, "beacons dropped after their retries");
}
