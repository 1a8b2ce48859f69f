import { createApp } from "./app";
import { deleteExpiredSessions } from "./auth/sessions";
import { logError } from "./lib/log";
import { consumeProjectDeletions, PROJECT_DELETION_QUEUE, sweepDeletedProjects } from "./projects/deletions";
import { consumeDeadDeletions, consumeDeletions, DELETION_DEAD_LETTERS, DELETION_QUEUE } from "./videos/deletions";
import { sweepDeletedVideos, sweepExpiredUploads } from "./videos/sweeper";
import {
  consumeDeadLetters,
  consumeDeliveries,
  DELIVERY_DEAD_LETTERS,
  DELIVERY_QUEUE,
} from "./webhooks/delivery-queue";
import { lanesOf } from "./webhooks/lane";
import { sweepOutbox } from "./webhooks/outbox";
import { deleteExpiredDeliveries } from "./webhooks/retention";

export { RateLimiter } from "./rate-limit/limiter";
export { DeliveryLane } from "./webhooks/lane";

const app = createApp();
const noop = () => {};

/** Each queue's consumer, by the queue's name (wrangler.toml). */
const CONSUMERS: Record<string, (batch: MessageBatch<unknown>, env: Env) => Promise<void> | void> = {
  [DELIVERY_QUEUE]: (batch, env) => consumeDeliveries(batch, lanesOf(env.DELIVERY_LANES)),
  [DELIVERY_DEAD_LETTERS]: (batch, env) => consumeDeadLetters(batch, env.DB),
  [DELETION_QUEUE]: (batch, env) =>
    consumeDeletions(batch, { db: env.DB, media: env.MEDIA, webhooks: env.WEBHOOK_QUEUE }),
  [DELETION_DEAD_LETTERS]: (batch) => consumeDeadDeletions(batch),
  [PROJECT_DELETION_QUEUE]: (batch, env) =>
    consumeProjectDeletions(batch, { db: env.DB, media: env.MEDIA, queue: env.PROJECT_DELETION_QUEUE }),
};

export default {
  fetch: app.fetch,
  async queue(batch, env, _ctx) {
    const consume = CONSUMERS[batch.queue];
    if (!consume) throw new Error(`no consumer for queue ${batch.queue}`);
    await consume(batch, env);
  },
  scheduled(_controller, env, ctx) {
    const run = (what: string, task: Promise<unknown>) =>
      ctx.waitUntil(task.then(noop, (error) => logError(`scheduled: ${what}`, error)));
    run("deleted videos' R2 clean-up", sweepDeletedVideos(env));
    run("expired uploads", sweepExpiredUploads(env));
    run("deleted projects' purge", sweepDeletedProjects({ db: env.DB, media: env.MEDIA }));
    run("expired sessions", deleteExpiredSessions(env.DB));
    run("outbox", sweepOutbox({ db: env.DB, queue: env.WEBHOOK_QUEUE }));
    run("delivery retention", deleteExpiredDeliveries(env.DB));
  },
} satisfies ExportedHandler<Env>;
