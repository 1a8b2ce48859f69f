import { deleteExpiredSessions } from "./auth/sessions";
import { readConfig } from "./config";
import { createApp } from "./http/app";
import { drain } from "./lib/drain";
import { logError } from "./lib/log";
import { sweepDeletedVideos, sweepExpiredUploads } from "./videos/sweeper";
import { consumeDeadLetters, consumeDeliveries } from "./webhooks/consumer";
import { sweepOutbox } from "./webhooks/outbox";
import { deleteExpiredDeliveries } from "./webhooks/retention";

export { RateLimiter } from "./rate-limit/limiter";

const app = createApp();
const DEAD_LETTERS = "webhook-deliveries-dlq";
const noop = () => {};

export default {
  fetch: app.fetch,
  queue(batch, env, _ctx) {
    if (batch.queue === DEAD_LETTERS) return consumeDeadLetters(batch, env.DB);
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
    run(
      "expired sessions",
      drain((limit) => deleteExpiredSessions(env.DB, Date.now(), limit)),
    );
    run("outbox", sweepOutbox({ db: env.DB, queue: env.WEBHOOK_QUEUE }));
    run("delivery retention", deleteExpiredDeliveries(env.DB));
  },
} satisfies ExportedHandler<Env>;
