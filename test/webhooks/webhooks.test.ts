import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import { VideoDeletedEventSchema } from "../../src/videos/events";
import { deliverOrReschedule, FAILURE_DELAY_SECONDS, MAX_FAILURES } from "../../src/webhooks/delivery";
import { api, bearer, errorCode, json, newKey, newVideo, newWorkspace, withCookie } from "../helpers";
import { apiWith } from "../support/app";
import { InstrumentedD1 } from "../support/d1";
import { runQueue, runScheduled } from "../support/handlers";
import { type Attempt, attemptsOf, consume, deleteAVideo, type Endpoint, expectedSignature, setUp } from "./support";

afterEach(() => {
  vi.restoreAllMocks();
});

describe("webhook endpoints", () => {
  it("creates an endpoint with a secret shown once, lists, reads and deletes it", async () => {
    const { base, key, endpoint } = await setUp();
    expect(endpoint).toMatchObject({
      url: "https://hooks.example.com/in",
      // Created without eventTypes: every type, including types added later (docs/webhooks.md).
      eventTypes: [
        "video.deleted",
        "video.playable",
        "video.ready",
        "video.errored",
        "video.captions.ready",
        "video.captions.errored",
      ],
      enabled: true,
      description: "main",
    });
    expect(endpoint.secret).toMatch(/^whsec_[A-Za-z0-9+/]{32}$/);
    const listed = (await (await api(base, bearer(key))).json()) as { data: Endpoint[] };
    expect(listed.data).toHaveLength(1);
    expect(listed.data[0]).not.toHaveProperty("secret");
    const one = await api(`${base}/${endpoint.id.toLowerCase()}`, bearer(key));
    expect(await one.json()).toEqual({ ...endpoint, secret: undefined });
    expect((await api(`${base}/${endpoint.id}`, bearer(key, { method: "DELETE" }))).status).toBe(204);
    const gone = await api(`${base}/${endpoint.id}`, bearer(key));
    expect(gone.status).toBe(404);
    expect(await errorCode(gone)).toBe("endpoint_not_found");
  });

  it("works under cookie auth too", async () => {
    const { session, project } = await newWorkspace();
    const response = await api(
      `/v1/projects/${project.id}/webhook-endpoints`,
      withCookie(session, json("POST", { url: "https://x.example" })),
    );
    expect(response.status).toBe(201);
  });

  it.each([
    ["an http URL", { url: "http://hooks.example.com" }],
    ["a relative URL", { url: "/hooks" }],
    ["another scheme", { url: "ftp://hooks.example.com" }],
    ["credentials in the URL", { url: "https://user:pw@hooks.example.com" }],
    ["an unknown event type", { url: "https://x.example", eventTypes: ["video.created"] }],
    ["no event types", { url: "https://x.example", eventTypes: [] }],
    ["a missing url", { description: "x" }],
    ["an unknown field", { url: "https://x.example", secret: "mine" }],
  ])("refuses %s with invalid_body", async (_, body) => {
    const { key, project } = await newWorkspace();
    const response = await api(`/v1/projects/${project.id}/webhook-endpoints`, bearer(key, json("POST", body)));
    expect(response.status).toBe(400);
    expect(await errorCode(response)).toBe("invalid_body");
  });

  it("accepts http:// where ALLOW_HTTP_WEBHOOKS is true", async () => {
    const { key, project } = await newWorkspace();
    const response = await apiWith(
      { ALLOW_HTTP_WEBHOOKS: "true" },
      `/v1/projects/${project.id}/webhook-endpoints`,
      bearer(key, json("POST", { url: "http://127.0.0.1:9999/hook" })),
    );
    expect(response.status).toBe(201);
  });

  it("keeps projects apart and checks scopes", async () => {
    const { base, session, project, endpoint } = await setUp();
    const other = await newWorkspace();
    const foreign = await api(base, bearer(other.key));
    expect(await errorCode(foreign)).toBe("not_found");
    expect(await errorCode(await api(`${base}/${endpoint.id}/deliveries`, bearer(other.key)))).toBe(
      "endpoint_not_found",
    );
    const reader = await newKey(session, project.id, ["read"]);
    expect((await api(base, bearer(reader))).status).toBe(200);
    expect(await errorCode(await api(base, bearer(reader, json("POST", { url: "https://x.example" }))))).toBe(
      "insufficient_scope",
    );
  });
});

describe("publishing video.deleted", () => {
  it("writes a pending first attempt per subscribed endpoint and marks the event published", async () => {
    const { key, endpoint } = await setUp();
    const videoId = await deleteAVideo(key);
    const attempts = await attemptsOf(endpoint.id);
    expect(attempts).toHaveLength(1);
    expect(attempts[0]).toMatchObject({ state: "pending", attempt: 1 });
    const event = await env.DB.prepare("SELECT id, published_at FROM outbox_events WHERE subject_id = ?")
      .bind(videoId)
      .first<{ id: string; published_at: string | null }>();
    expect(event?.published_at).toBeTruthy();
    expect(attempts[0]?.event_id).toBe(event?.id);
  });

  it("publishes from the scheduled sweep what the request did not", async () => {
    const { key, endpoint } = await setUp();
    const { video } = await newVideo(key);
    // The follow-up message is lost (its send fails): the delete still succeeds, the event is in
    // the outbox only.
    vi.spyOn(console, "error").mockImplementation(() => {});
    const lost = { send: () => Promise.reject(new Error("queue unavailable")) } as unknown as Queue;
    const response = await apiWith(
      { DELETION_QUEUE: lost },
      `/v1/videos/${video.id}`,
      bearer(key, { method: "DELETE" }),
    );
    expect(response.status).toBe(204);
    expect(await attemptsOf(endpoint.id)).toHaveLength(0);
    await env.DB.prepare("UPDATE outbox_events SET created_at = '2020-01-01T00:00:00.000Z' WHERE subject_id = ?")
      .bind(video.id)
      .run();
    await runScheduled();
    expect(await attemptsOf(endpoint.id)).toHaveLength(1);
  });
});

describe("the delivery consumer", () => {
  it("posts the event signed as Standard Webhooks and records success", async () => {
    const { key, endpoint } = await setUp();
    const videoId = await deleteAVideo(key);
    const [attempt] = await attemptsOf(endpoint.id);
    const sent: Request[] = [];
    vi.spyOn(globalThis, "fetch").mockImplementation(async (input, init) => {
      sent.push(new Request(input, init));
      return new Response("ok", { status: 200 });
    });
    const result = await consume([{ deliveryId: attempt?.id }]);
    expect(result.explicitAcks).toEqual(["m0"]);
    expect(sent).toHaveLength(1);
    const request = sent[0] as Request;
    expect(request.url).toBe("https://hooks.example.com/in");
    const body = await request.text();
    // The delivered body is exactly the documented event.
    expect(VideoDeletedEventSchema.parse(JSON.parse(body))).toMatchObject({
      type: "video.deleted",
      data: { id: videoId },
    });
    const id = request.headers.get("webhook-id") ?? "";
    const timestamp = request.headers.get("webhook-timestamp") ?? "";
    expect(id).toBe(attempt?.event_id);
    expect(Math.abs(Number(timestamp) - Date.now() / 1000)).toBeLessThan(60);
    expect(request.headers.get("webhook-signature")).toBe(
      await expectedSignature(endpoint.secret ?? "", id, timestamp, body),
    );
    expect((await attemptsOf(endpoint.id))[0]).toMatchObject({ state: "succeeded" });
    // The same message again does nothing: the attempt is done.
    await consume([{ deliveryId: attempt?.id }]);
    expect(sent).toHaveLength(1);
  });

  it("records a failure and schedules the next attempt 5 s later", async () => {
    const { key, endpoint } = await setUp();
    await deleteAVideo(key);
    const [first] = await attemptsOf(endpoint.id);
    vi.spyOn(globalThis, "fetch").mockResolvedValue(new Response("nope", { status: 503 }));
    const before = Date.now();
    await consume([{ deliveryId: first?.id }]);
    const attempts = await attemptsOf(endpoint.id);
    expect(attempts.map((a) => [a.attempt, a.state])).toEqual([
      [1, "failed"],
      [2, "pending"],
    ]);
    const due = Date.parse(attempts[0]?.next_retry_at ?? "");
    expect(due - before).toBeGreaterThanOrEqual(5000);
    expect(due - before).toBeLessThan(15000);
  });

  it("gives up after the eighth attempt", async () => {
    const { key, endpoint } = await setUp();
    await deleteAVideo(key);
    await env.DB.prepare("UPDATE webhook_deliveries SET attempt = 8 WHERE endpoint_id = ?").bind(endpoint.id).run();
    const [last] = await attemptsOf(endpoint.id);
    vi.spyOn(globalThis, "fetch").mockRejectedValue(new TypeError("connection refused"));
    await consume([{ deliveryId: last?.id }]);
    const attempts = await attemptsOf(endpoint.id);
    expect(attempts).toHaveLength(1);
    expect(attempts[0]).toMatchObject({ state: "failed", next_retry_at: null });
  });

  it("acks a malformed message, and retries a message its lane could not take", async () => {
    const { key, endpoint, project } = await setUp();
    await deleteAVideo(key);
    const [attempt] = await attemptsOf(endpoint.id);
    expect((await consume([{ nope: 1 }])).explicitAcks).toEqual(["m0"]);
    const unreachable = {
      idFromName: () => {
        throw new Error("Durable Objects unavailable");
      },
    } as unknown as Env["DELIVERY_LANES"];
    const message = { deliveryId: attempt?.id, endpointId: endpoint.id, projectId: project.id };
    const result = await runQueue("webhook-deliveries", [message], { DELIVERY_LANES: unreachable });
    expect(result.retryMessages.map((m) => m.msgId)).toEqual(["m0"]);
    expect((await attemptsOf(endpoint.id))[0]).toMatchObject({ state: "pending" });
  });

  it("sends a message again later on an infrastructure failure in its lane, and gives up after the fifth", async () => {
    const { key, endpoint, project } = await setUp();
    await deleteAVideo(key);
    const [attempt] = await attemptsOf(endpoint.id);
    const sent: { body: unknown; delaySeconds?: number | undefined }[] = [];
    const queue = {
      sendBatch: async (messages: { body: unknown; delaySeconds?: number }[]) => {
        sent.push(...messages);
      },
    } as unknown as Queue;
    const failing = new InstrumentedD1(env.DB, (sql) => sql.startsWith("UPDATE webhook_deliveries SET claimed_until"));
    const deps = { db: failing.binding, queue, fetch, targets: { allowHttp: false } };
    const message = { deliveryId: attempt?.id ?? "", endpointId: endpoint.id, projectId: project.id };
    await deliverOrReschedule(deps, message);
    expect(sent).toEqual([{ body: { ...message, failures: 1 }, delaySeconds: FAILURE_DELAY_SECONDS }]);
    expect((await attemptsOf(endpoint.id))[0]).toMatchObject({ state: "pending" });

    await deliverOrReschedule(deps, { ...message, failures: MAX_FAILURES - 1 });
    expect(sent).toHaveLength(1);
    expect((await attemptsOf(endpoint.id))[0]).toMatchObject({ state: "failed" });
    const [row] = await env.DB.prepare("SELECT error FROM webhook_deliveries WHERE id = ?")
      .bind(attempt?.id)
      .all<{ error: string }>()
      .then((r) => r.results);
    expect(row?.error).toBe("gave_up");
  });
});

describe("GET …/deliveries", () => {
  async function withAttempts() {
    const setup = await setUp();
    vi.spyOn(globalThis, "fetch").mockResolvedValue(new Response("", { status: 500 }));
    await deleteAVideo(setup.key);
    const [first] = await attemptsOf(setup.endpoint.id);
    await consume([{ deliveryId: first?.id }]);
    return { ...setup, path: `${setup.base}/${setup.endpoint.id}/deliveries` };
  }

  it("lists attempts newest first, with keyset pagination and filters", async () => {
    const { key, path } = await withAttempts();
    const all = (await (await api(path, bearer(key))).json()) as { data: Attempt[]; nextCursor: string | null };
    expect(all.data.map((a) => [a.attempt, a.state])).toEqual([
      [2, "pending"],
      [1, "failed"],
    ]);
    expect(all.nextCursor).toBeNull();
    expect(all.data[1]).toMatchObject({
      eventType: "video.deleted",
      responseStatus: 500,
      error: "http_status",
      nextRetryAt: expect.any(String),
    });
    expect(Object.keys(all.data[1] ?? {}).sort()).toEqual([
      "attempt",
      "completedAt",
      "createdAt",
      "durationMs",
      "endpointId",
      "error",
      "eventId",
      "eventType",
      "id",
      "nextRetryAt",
      "responseStatus",
      "state",
    ]);

    const first = (await (await api(`${path}?limit=1`, bearer(key))).json()) as { data: Attempt[]; nextCursor: string };
    const second = (await (await api(`${path}?limit=1&cursor=${first.nextCursor}`, bearer(key))).json()) as {
      data: Attempt[];
      nextCursor: string | null;
    };
    expect([...first.data, ...second.data].map((a) => a.attempt)).toEqual([2, 1]);
    expect(second.nextCursor).toBeNull();

    const failed = (await (await api(`${path}?state=failed`, bearer(key))).json()) as { data: Attempt[] };
    expect(failed.data.map((a) => a.attempt)).toEqual([1]);
    const none = (await (await api(`${path}?eventType=video.created`, bearer(key))).json()) as { data: Attempt[] };
    expect(none.data).toEqual([]);
  });

  it.each([
    ["state=done", "invalid_state"],
    ["limit=0", "invalid_limit"],
    ["limit=101", "invalid_limit"],
    ["cursor=forged", "invalid_cursor"],
    ["state=failed&state=pending", "invalid_state"],
    ["cursor=a&cursor=b", "invalid_cursor"],
  ])("refuses %s", async (query, code) => {
    const { key, path } = await withAttempts();
    const response = await api(`${path}?${query}`, bearer(key));
    expect(response.status).toBe(400);
    expect(await errorCode(response)).toBe(code);
  });

  it("answers endpoint_not_found for unknown endpoints", async () => {
    const { key, base } = await setUp();
    for (const id of ["01ARZ3NDEKTSV4RRFFQ69G5FAV", "nope"]) {
      const response = await api(`${base}/${id}/deliveries`, bearer(key));
      expect(response.status).toBe(404);
      expect(await errorCode(response)).toBe("endpoint_not_found");
    }
  });

  it("is rate limited under its own policy", async () => {
    const { key, path } = await withAttempts();
    expect((await api(path, bearer(key))).headers.get("ratelimit-policy")).toBe('"deliveries";q=60;w=60');
  });

  it("retries an attempt as a new one", async () => {
    const { key, path } = await withAttempts();
    const [, failed] = ((await (await api(path, bearer(key))).json()) as { data: Attempt[] }).data;
    const response = await api(`${path}/${failed?.id}/retry`, bearer(key, { method: "POST" }));
    expect(response.status).toBe(202);
    expect(await response.json()).toMatchObject({ state: "pending", attempt: 3, eventId: failed?.eventId });
    // Concurrent retries each get an attempt of their own.
    const burst = await Promise.all(
      [4, 5, 6].map(() => api(`${path}/${failed?.id}/retry`, bearer(key, { method: "POST" }))),
    );
    expect(burst.map((r) => r.status)).toEqual([202, 202, 202]);
    const numbers = await Promise.all(burst.map(async (r) => ((await r.json()) as Attempt).attempt));
    expect(numbers.sort()).toEqual([4, 5, 6]);
    const unknown = await api(`${path}/01ARZ3NDEKTSV4RRFFQ69G5FAV/retry`, bearer(key, { method: "POST" }));
    expect(await errorCode(unknown)).toBe("not_found");
  });
});
