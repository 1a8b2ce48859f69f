import { z } from "zod";
import type { Db } from "../lib/db";
import { consumeEach } from "../lib/queue";
import { ULID_PATTERN } from "../lib/ulid";
import { giveUpAttemptStatement } from "./attempt-queries";

/**
 * The `webhook-deliveries` queue (and its dead-letter queue): one message per delivery attempt.
 * Its consumer does not send anything itself: it hands each attempt to its endpoint's lane (a
 * Durable Object per endpoint, `./lane.ts`) and is done, so an endpoint that hangs holds only its
 * own lane, never a batch that other tenants' events wait behind.
 */
export const DELIVERY_QUEUE = "webhook-deliveries";
export const DELIVERY_DEAD_LETTERS = "webhook-deliveries-dlq";

const Id = z.string().regex(ULID_PATTERN);
export const DeliveryMessageSchema = z.strictObject({
  deliveryId: Id,
  endpointId: Id,
  projectId: Id,
  /** How many times a lane failed to deliver it for an infrastructure reason. */
  failures: z.int().min(1).max(100).optional(),
});
export type DeliveryMessage = z.infer<typeof DeliveryMessageSchema>;

/** Queues sendBatch takes at most this many messages. */
const SEND_BATCH = 100;

export async function enqueue(queue: Queue, messages: DeliveryMessage[], delaySeconds = 0): Promise<void> {
  for (let i = 0; i < messages.length; i += SEND_BATCH) {
    const chunk = messages.slice(i, i + SEND_BATCH);
    await queue.sendBatch(chunk.map((body) => ({ body, delaySeconds })));
  }
}

/** Where the consumer hands an attempt: its endpoint's lane. */
export type Lanes = { accept(message: DeliveryMessage): Promise<void> };

/** The queue handler: every message of the batch handed to its lane at once. */
export function consumeDeliveries(batch: MessageBatch<unknown>, lanes: Lanes): Promise<void> {
  return consumeEach(
    batch,
    DeliveryMessageSchema,
    { malformed: "webhook message malformed", failed: "webhook hand-off" },
    (message) => lanes.accept(message),
  );
}

/**
 * The dead-letter queue's handler: a message here used up the queue's retries, so its attempt is
 * failed as `gave_up`; nothing stays pending for the sweeper to send again in a loop.
 */
export function consumeDeadLetters(batch: MessageBatch<unknown>, db: Db): Promise<void> {
  const now = Date.now();
  return consumeEach(
    batch,
    DeliveryMessageSchema.pick({ deliveryId: true }).loose(),
    { malformed: "webhook message malformed", failed: "webhook dead letter" },
    async ({ deliveryId }) => {
      await giveUpAttemptStatement(db, deliveryId, now).run();
    },
  );
}
