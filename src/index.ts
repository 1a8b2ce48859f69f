import { createApp } from "./http/app";

export { RateLimiter } from "./rate-limit/limiter";

const app = createApp();

export default {
  fetch: app.fetch,
} satisfies ExportedHandler<Env>;
