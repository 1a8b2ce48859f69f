import { createMiddleware } from "hono/factory";
import type { AppEnv, Caller } from "../http/context";
import { ApiError } from "../http/errors";
import { documented } from "../http/route";
import { POLICIES, type PolicyName } from "./policies";

function callerKey(caller: Caller): string {
  return caller.kind === "key" ? `key:${caller.keyId}` : `session:${caller.sessionId}`;
}

/** Counts the request against `name`; sets RateLimit headers on every answer, 429 past the limit. */
export function rateLimit(name: PolicyName) {
  const policy = POLICIES[name];
  const middleware = createMiddleware<AppEnv>(async (c, next) => {
    const subject =
      policy.per === "ip" ? `ip:${c.req.header("cf-connecting-ip") ?? "unknown"}` : callerKey(c.var.caller);
    const limiter = c.env.RATE_LIMITER.get(c.env.RATE_LIMITER.idFromName(subject));
    const result = await limiter.consume({
      policy: name,
      limit: policy.limit,
      windowSeconds: policy.windowSeconds,
    });
    c.header("RateLimit-Policy", `"${name}";q=${policy.limit};w=${policy.windowSeconds}`);
    c.header("RateLimit", `"${name}";r=${result.remaining};t=${result.resetSeconds}`);
    if (!result.allowed) {
      throw new ApiError("rate_limited", { headers: { "Retry-After": String(result.resetSeconds) } });
    }
    await next();
  });
  return documented(middleware, () => ["rate_limited"]);
}
