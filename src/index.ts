import { createApp } from "./app";
import { deleteExpiredSessions } from "./auth/sessions";
import { readConfig } from "./config";
import { logError } from "./lib/log";
import { consumeDeadDeletions, consumeDeletions } from "./videos/deletions";
import { sweepDeletedVideos, sweepExpiredUploads } from "./videos/sweeper";
import { consumeDeadLetters, consumeDeliveries } from "./webhooks/consumer";
import { sweepOutbox } from "./webhooks/outbox";
import { deleteExpiredDeliveries } from "./webhooks/retention";

export { RateLimiter } from "./rate-limit/limiter";

const app = createApp();
/** Queue names, as in wrangler.toml: one handler serves them all. */
const QUEUES = {
  deliveries: "webhook-deliveries",
  deadDeliveries: "webhook-deliveries-dlq",
  deletions: "video-deletions",
  deadDeletions: "video-deletions-dlq",
} as const;
const noop = () => {};

export default {
  fetch: app.fetch,
  async queue(batch, env, _ctx) {
    switch (batch.queue) {
      case QUEUES.deletions:
        return consumeDeletions(batch, { db: env.DB, media: env.MEDIA, webhooks: env.WEBHOOK_QUEUE });
      case QUEUES.deadDeletions:
        return consumeDeadDeletions(batch);
      case QUEUES.deadDeliveries:
        return consumeDeadLetters(batch, env.DB);
      case QUEUES.deliveries:
        break;
      default:
        throw new Error(`no consumer for queue ${batch.queue}`);
    }
    return consumeDeliveries(batch, {
      db: env.DB,
      queue: env.WEBHOOK_QUEUE,
      fetch: (...args) => fetch(...args),
      targets: { allowHttp: readConfig(env).allowHttpWebhooks },
    });
  },
  scheduled(_controller, env, ctx) {
    const run = (what: string, task: Promise<unknown>) =>
      ctx.waitUntil(task.then(noop, (error) => logError(`scheduled: ${what}`, error)));
    run("deleted videos' R2 clean-up", sweepDeletedVideos(env));
    run("expired uploads", sweepExpiredUploads(env));
    run("expired sessions", deleteExpiredSessions(env.DB));
    run("outbox", sweepOutbox({ db: env.DB, queue: env.WEBHOOK_QUEUE }));
    run("delivery retention", deleteExpiredDeliveries(env.DB));
  },
} satisfies ExportedHandler<Env>;
