import { createApp } from "./http/app";
import { sweepDeletedVideos } from "./videos/sweeper";

export { RateLimiter } from "./rate-limit/limiter";

const app = createApp();

export default {
  fetch: app.fetch,
  scheduled(_controller, env, ctx) {
    ctx.waitUntil(sweepDeletedVideos(env));
  },
} satisfies ExportedHandler<Env>;
