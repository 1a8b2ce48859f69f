import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import type { RateLimiter } from "../../src/rate-limit/limiter";
import { api, clientIp, json, newSession, withCookie } from "../helpers";

function limiter(name: string) {
  return env.RATE_LIMITER.get(env.RATE_LIMITER.idFromName(name));
}

const one = (policy: string, limit: number, subject = "caller") => ({
  policy,
  windowSeconds: 60,
  buckets: [{ subject, limit }],
});

describe("RateLimiter Durable Object", () => {
  it("counts a rolling window, with time injected", async () => {
    await runInDurableObject(limiter("unit-rolling"), (instance: RateLimiter) => {
      const policy = one("p", 3);
      const t0 = 1_700_000_000_000;
      expect(instance.consume(policy, t0)).toEqual({
        allowed: true,
        bucket: 0,
        limit: 3,
        remaining: 2,
        resetSeconds: 60,
      });
      expect(instance.consume(policy, t0 + 10_000).remaining).toBe(1);
      expect(instance.consume(policy, t0 + 20_000).remaining).toBe(0);
      expect(instance.consume(policy, t0 + 30_000)).toEqual({
        allowed: false,
        bucket: 0,
        limit: 3,
        remaining: 0,
        resetSeconds: 30,
      });
      // The first request leaves the window at t0 + 60 s, and frees exactly one slot.
      expect(instance.consume(policy, t0 + 60_000)).toMatchObject({ allowed: true, remaining: 0 });
      expect(instance.consume(policy, t0 + 60_001).allowed).toBe(false);
    });
  });

  it("counts the same rolling window in memory (consumeInMemory), bucket by bucket, storing nothing", async () => {
    await runInDurableObject(limiter("unit-in-memory"), (instance: RateLimiter, state) => {
      const policy = {
        policy: "beacons",
        windowSeconds: 60,
        buckets: [
          { subject: "ip:10.0.0.1", limit: 3 },
          { subject: "view:a", limit: 2 },
        ],
      };
      const t0 = 1_700_000_000_000;
      expect(instance.consumeInMemory(policy, t0)).toEqual({
        allowed: true,
        bucket: 1,
        limit: 2,
        remaining: 1,
        resetSeconds: 60,
      });
      expect(instance.consumeInMemory(policy, t0 + 10_000)).toMatchObject({ allowed: true, bucket: 1, remaining: 0 });
      expect(instance.consumeInMemory(policy, t0 + 20_000)).toEqual({
        allowed: false,
        bucket: 1,
        limit: 2,
        remaining: 0,
        resetSeconds: 40,
      });
      const other = {
        ...policy,
        buckets: [policy.buckets[0] as (typeof policy.buckets)[0], { subject: "view:b", limit: 2 }],
      };
      expect(instance.consumeInMemory(other, t0 + 20_000)).toMatchObject({ allowed: true, bucket: 0, remaining: 0 });
      expect(instance.consumeInMemory(other, t0 + 30_000)).toMatchObject({ allowed: false, bucket: 0 });
      // The first request leaves the window at t0 + 60 s, freeing one slot in each of its buckets.
      expect(instance.consumeInMemory(policy, t0 + 60_000)).toMatchObject({ allowed: true });
      expect(instance.consumeInMemory(policy, t0 + 60_001).allowed).toBe(false);
      const stored = state.storage.sql.exec<{ n: number }>("SELECT count(*) AS n FROM bucket_hits").one().n;
      expect(stored).toBe(0);
    });
  });

  it("counts a beacon in memory, and says whether its view counts: at most 20 started of a video a minute", async () => {
    await runInDurableObject(limiter("unit-beacon"), (instance: RateLimiter, state) => {
      const t0 = 1_700_000_000_000;
      const beacon = (viewId: string, now: number, addressLimit = 600) =>
        instance.consumeBeacon(
          {
            policy: "beacons",
            windowSeconds: 60,
            buckets: [
              { subject: "ip:10.0.0.2", limit: addressLimit },
              { subject: `view:${viewId}`, limit: 60 },
            ],
            view: { videoId: "video", viewId },
          },
          now,
        );
      for (let i = 0; i < 20; i++) expect(beacon(`view-${i}`, t0)).toMatchObject({ allowed: true, counts: true });
      // Passed (and counted against the buckets), but its view counts nothing: the route answers 204.
      expect(beacon("view-20", t0)).toMatchObject({ allowed: true, counts: false, remaining: 59 });
      expect(beacon("view-0", t0 + 1000)).toMatchObject({ allowed: true, counts: true });
      // Refused by a bucket: neither passes nor counts, and starts no view.
      expect(beacon("view-21", t0 + 60_000, 1)).toMatchObject({ allowed: false, counts: false });
      expect(beacon("view-21", t0 + 60_000)).toMatchObject({ allowed: true, counts: true });
      expect(() => instance.consumeBeacon({ policy: "beacons", windowSeconds: 60, buckets: [] } as never)).toThrow();
      const stored = state.storage.sql.exec<{ n: number }>("SELECT count(*) AS n FROM bucket_hits").one().n;
      expect(stored).toBe(0);
    });
  });

  it("keeps policies and subjects apart", async () => {
    await runInDurableObject(limiter("unit-policies"), (instance: RateLimiter) => {
      const now = 1_700_000_000_000;
      expect(instance.consume(one("a", 1), now).allowed).toBe(true);
      expect(instance.consume(one("a", 1), now).allowed).toBe(false);
      expect(instance.consume(one("b", 1), now).allowed).toBe(true);
      expect(instance.consume(one("a", 1, "other"), now).allowed).toBe(true);
    });
  });

  it("passes a request only when every bucket has room, and counts it in each", async () => {
    await runInDurableObject(limiter("unit-buckets"), (instance: RateLimiter) => {
      const now = 1_700_000_000_000;
      const request = (caller: string) => ({
        policy: "bulk",
        windowSeconds: 60,
        buckets: [
          { subject: caller, limit: 3 },
          { subject: "project", limit: 5 },
        ],
      });
      // Caller a: its own bucket is the tighter one.
      expect(instance.consume(request("a"), now)).toMatchObject({ allowed: true, bucket: 0, remaining: 2 });
      expect(instance.consume(request("a"), now)).toMatchObject({ allowed: true, bucket: 0, remaining: 1 });
      expect(instance.consume(request("b"), now)).toMatchObject({ allowed: true, bucket: 0, remaining: 2 });
      expect(instance.consume(request("c"), now)).toMatchObject({ allowed: true, bucket: 1, remaining: 1 });
      expect(instance.consume(request("c"), now)).toMatchObject({ allowed: true, bucket: 1, remaining: 0 });
      // The project is full: a fresh caller is refused, and nothing of it is counted.
      expect(instance.consume(request("d"), now)).toMatchObject({ allowed: false, bucket: 1, limit: 5 });
      expect(instance.consume(request("d"), now + 60_000)).toMatchObject({ allowed: true, bucket: 0, remaining: 2 });
    });
  });

  it("gives back a released request", async () => {
    await runInDurableObject(limiter("unit-release"), (instance: RateLimiter) => {
      const now = 1_700_000_000_000;
      instance.consume(one("p", 1), now);
      expect(instance.consume(one("p", 1), now).allowed).toBe(false);
      instance.release({ policy: "p", subject: "caller" });
      expect(instance.consume(one("p", 1), now).allowed).toBe(true);
    });
  });

  it("peeks without counting", async () => {
    await runInDurableObject(limiter("unit-peek"), (instance: RateLimiter) => {
      const policy = one("p", 2);
      const t0 = 1_700_000_000_000;
      expect(instance.peek(policy, t0)).toEqual({ allowed: true, bucket: 0, limit: 2, remaining: 2, resetSeconds: 60 });
      instance.consume(policy, t0);
      expect(instance.peek(policy, t0 + 1_000)).toMatchObject({ allowed: true, remaining: 1, resetSeconds: 59 });
      expect(instance.peek(policy, t0 + 1_000)).toMatchObject({ allowed: true, remaining: 1 });
      expect(instance.consume(policy, t0 + 1_000)).toMatchObject({ allowed: true, remaining: 0 });
      expect(instance.peek(policy, t0 + 20_000)).toEqual({
        allowed: false,
        bucket: 0,
        limit: 2,
        remaining: 0,
        resetSeconds: 40,
      });
      expect(instance.peek(policy, t0 + 60_000)).toMatchObject({ allowed: true, remaining: 1 });
    });
  });

  it("validates its input", async () => {
    await runInDurableObject(limiter("unit-input"), (instance: RateLimiter) => {
      expect(() => instance.consume(one("", 1))).toThrow();
      expect(() => instance.consume(one("p", 0))).toThrow();
      expect(() => instance.consume({ policy: "p", windowSeconds: 60, buckets: [] })).toThrow();
    });
  });

  it("is exact under concurrent RPC calls", async () => {
    const stub = limiter("unit-concurrent");
    const results = await Promise.all(Array.from({ length: 40 }, () => stub.consume(one("bulk", 30))));
    expect(results.filter((result) => result.allowed)).toHaveLength(30);
  });
});

describe("rate-limited routes", () => {
  it("lets exactly 60 of 70 simultaneous project creations by one session through", async () => {
    const session = await newSession();
    const responses = await Promise.all(
      Array.from({ length: 70 }, (_, i) => api("/v1/projects", withCookie(session, json("POST", { name: `p${i}` })))),
    );
    const statuses = responses.map((response) => response.status);
    expect(statuses.filter((status) => status === 201)).toHaveLength(60);
    expect(statuses.filter((status) => status === 429)).toHaveLength(10);
    const limited = responses.find((response) => response.status === 429);
    expect(limited?.headers.get("retry-after")).toMatch(/^\d+$/);
    expect(limited?.headers.get("ratelimit-policy")).toBe('"project_create";q=60;w=60');
    expect(limited?.headers.get("ratelimit")).toMatch(/^"project_create";r=0;t=\d+$/);
    const body = (await limited?.json()) as { error: { code: string; requestId: string } };
    expect(body.error.code).toBe("rate_limited");
    // Another session has its own budget.
    const other = await newSession();
    expect((await api("/v1/projects", withCookie(other, json("POST", { name: "x" })))).status).toBe(201);
  });

  it("sets RateLimit headers on successes and on validation errors alike", async () => {
    const session = await newSession();
    const ok = await api("/v1/projects", withCookie(session, json("POST", { name: "x" })));
    expect(ok.headers.get("ratelimit-policy")).toBe('"project_create";q=60;w=60');
    expect(ok.headers.get("ratelimit")).toBe('"project_create";r=59;t=60');
    const bad = await api("/v1/projects", withCookie(session, json("POST", { name: "" })));
    expect(bad.status).toBe(400);
    // t counts down from the first request of the window, whole seconds.
    expect(bad.headers.get("ratelimit")).toMatch(/^"project_create";r=58;t=(59|60)$/);
  });

  it("limits login to 10 a minute per client address", async () => {
    const ip = clientIp();
    const attempts = await Promise.all(
      Array.from({ length: 12 }, () =>
        api(
          "/v1/auth/login",
          json("POST", { email: "x@example.com", password: "0123456789" }, { "cf-connecting-ip": ip }),
        ),
      ),
    );
    expect(attempts.filter((response) => response.status === 401)).toHaveLength(10);
    expect(attempts.filter((response) => response.status === 429)).toHaveLength(2);
  });
});
