import { createApp } from "./http/app";
import { sweepPendingAborts } from "./videos/sweeper";

export { RateLimiter } from "./rate-limit/limiter";

const app = createApp();

export default {
  fetch: app.fetch,
  scheduled(_controller, env, ctx) {
    ctx.waitUntil(sweepPendingAborts(env));
  },
} satisfies ExportedHandler<Env>;
