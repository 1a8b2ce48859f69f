import { createApp } from "./http/app";
import { sweepDeletedVideos } from "./videos/sweeper";
import { consumeDeliveries } from "./webhooks/consumer";
import { sweepOutbox } from "./webhooks/outbox";

export { RateLimiter } from "./rate-limit/limiter";

const app = createApp();

export default {
  fetch: app.fetch,
  queue(batch, env, _ctx) {
    return consumeDeliveries(batch, { db: env.DB, queue: env.WEBHOOK_QUEUE, fetch: (...args) => fetch(...args) });
  },
  scheduled(_controller, env, ctx) {
    ctx.waitUntil(sweepDeletedVideos(env));
    ctx.waitUntil(sweepOutbox({ db: env.DB, queue: env.WEBHOOK_QUEUE }));
  },
} satisfies ExportedHandler<Env>;
