import { createMiddleware } from "hono/factory";
import { readConfig } from "../config";
import { ulid } from "../lib/ulid";
import type { AppEnv } from "./context";

/** Gives every request its own id (a client-sent one is not trusted) and the parsed config. */
export const requestContext = createMiddleware<AppEnv>(async (c, next) => {
  const requestId = ulid();
  c.set("requestId", requestId);
  c.set("config", readConfig(c.env));
  c.header("x-request-id", requestId);
  await next();
  if (c.res.headers.get("x-request-id") !== requestId) {
    c.res = new Response(c.res.body, c.res);
    c.res.headers.set("x-request-id", requestId);
  }
});
