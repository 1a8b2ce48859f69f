import { createMiddleware } from "hono/factory";
import { readConfig } from "../config";
import { ulid } from "../lib/ulid";
import type { AppEnv } from "./context";

/**
 * Gives every request its own id (a client-sent one is not trusted), sets the headers every
 * response carries (nosniff everywhere, no-store on the API), and reports the Worker's own time to
 * the response in `Server-Timing` (work left to `waitUntil` is not in it).
 */
export const requestContext = createMiddleware<AppEnv>(async (c, next) => {
  const start = performance.now();
  const requestId = ulid();
  c.set("requestId", requestId);
  c.header("x-request-id", requestId);
  await next();
  if (c.res.headers.get("x-request-id") !== requestId) {
    c.res = new Response(c.res.body, c.res);
    c.res.headers.set("x-request-id", requestId);
  }
  c.res.headers.set("X-Content-Type-Options", "nosniff");
  // API answers are per caller and per moment: no cache may keep them (public images set their own).
  if (c.req.path.startsWith("/v1/") || c.req.path === "/v1") c.res.headers.set("Cache-Control", "no-store");
  // The API's JSON media type names its charset (docs/api-rules.md#json-bodies).
  if (c.res.headers.get("content-type") === "application/json") {
    c.res.headers.set("content-type", "application/json; charset=utf-8");
  }
  c.res.headers.append("Server-Timing", `app;dur=${(performance.now() - start).toFixed(1)}`);
});

/**
 * The parsed configuration. Its own step after `requestContext`, so that a configuration the
 * Worker refuses still gets an error body with the request id and the common headers.
 */
export const loadConfig = createMiddleware<AppEnv>(async (c, next) => {
  c.set("config", readConfig(c.env));
  await next();
});
