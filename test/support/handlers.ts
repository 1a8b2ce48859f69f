import {
  createExecutionContext,
  createMessageBatch,
  createScheduledController,
  getQueueResult,
  waitOnExecutionContext,
} from "cloudflare:test";
import { env } from "cloudflare:workers";
import worker from "../../src/index";

/**
 * Runs the Worker's queue handler over messages sent to `queue`, as the Queues runtime would
 * (message ids `${idPrefix}0`, `${idPrefix}1`, …), with some bindings replaced if asked.
 */
export async function runQueue(queue: string, bodies: unknown[], bindings: Partial<Env> = {}, idPrefix = "m") {
  const batch = createMessageBatch(
    queue,
    bodies.map((body, i) => ({ id: `${idPrefix}${i}`, timestamp: new Date(), attempts: 1, body })),
  );
  const ctx = createExecutionContext();
  await worker.queue(batch, { ...env, ...bindings }, ctx);
  return getQueueResult(batch, ctx);
}

/** Runs the Worker's scheduled handler once, as the cron trigger would, and waits for its work. */
export async function runScheduled(): Promise<void> {
  const ctx = createExecutionContext();
  await worker.scheduled(createScheduledController({ cron: "* * * * *" }), env, ctx);
  await waitOnExecutionContext(ctx);
}
