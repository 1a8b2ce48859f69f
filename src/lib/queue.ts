import type { z } from "zod";
import { logError } from "./log";

/**
 * Runs `handle` on every message of a batch at once (a batch is small: `max_batch_size` in
 * wrangler.toml), so one slow message does not hold the others back. A body `schema` refuses can never
 * succeed: it is logged (as `labels.malformed`) and acknowledged. A `handle` that throws is logged
 * (as `labels.failed`) and retried, by the queue's retries and then its dead-letter queue.
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
        logError(labels.failed, error, { messageId: message.id, attempts: message.attempts });
        message.retry();
      }
    }),
  );
}
