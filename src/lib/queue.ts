import type { z } from "zod";
import { logError } from "./log";

/** What a queue handler throws when its message cannot be handled yet (not a failure). */
export class RetryLater extends Error {
  override name = "RetryLater";
  constructor(readonly seconds: number) {
    super(`retry in ${seconds} s`);
  }
}

/**
 * Runs `handle` on every message of a batch at once (a batch is small: `max_batch_size` in
 * wrangler.toml), so one slow message does not hold the others back. A body `schema` refuses can never
 * succeed: it is logged (as `labels.malformed`) and acknowledged. A `handle` that throws is logged
 * (as `labels.failed`) and retried, by the queue's retries and then its dead-letter queue. A
 * `handle` that throws `RetryLater` has not failed but cannot go on yet: the message comes again
 * that much later, unlogged.
 */
export async function consumeEach<T>(
  batch: MessageBatch<unknown>,
  schema: z.ZodType<T>,
  labels: { malformed: string; failed: string },
  handle: (body: T) => Promise<void>,
): Promise<void> {
  await Promise.all(
    batch.messages.map(async (message) => {
      const parsed = schema.safeParse(message.body);
      if (!parsed.success) {
        logError(labels.malformed, parsed.error.message, { messageId: message.id });
        message.ack();
        return;
      }
      try {
        await handle(parsed.data);
        message.ack();
      } catch (error) {
        if (error instanceof RetryLater) {
          message.retry({ delaySeconds: error.seconds });
          return;
        }
        logError(labels.failed, error, { messageId: message.id, attempts: message.attempts });
        message.retry();
      }
    }),
  );
}

/**
 * A dead-letter queue's handler where what its messages did not finish is still recorded in D1, so
 * the scheduled sweep does it: each message is logged (as `what`) and acknowledged.
 */
export function logDeadLetters(batch: MessageBatch<unknown>, what: string): void {
  for (const message of batch.messages) {
    logError(what, JSON.stringify(message.body), { messageId: message.id });
    message.ack();
  }
}
