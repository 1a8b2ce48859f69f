import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import { isoTime } from "../../src/lib/time";
import { deleteExpiredDeliveries, RETENTION_MS } from "../../src/webhooks/retention";
import { ADMIN, api, bearer, errorCode, json } from "../helpers";
import { runScheduled } from "../support/handlers";
import { attemptsOf, consume, consumeDeadLetters, deleteAVideo, expectedSignature, setUp } from "./support";

afterEach(() => {
  vi.restoreAllMocks();
});

function answer(status: number) {
  const sent: Request[] = [];
  vi.spyOn(globalThis, "fetch").mockImplementation(async (input, init) => {
    sent.push(new Request(input, init));
    return new Response("", { status });
  });
  return sent;
}

async function endpointOf(base: string, key: string, id: string) {
  return (await (await api(`${base}/${id}`, bearer(key))).json()) as {
    enabled: boolean;
    disabledReason: string | null;
  };
}

describe("410 Gone", () => {
  it("disables the endpoint at once, fails the attempt with no retry, and stops new attempts", async () => {
    const { base, key, endpoint } = await setUp();
    await deleteAVideo(key);
    const [first] = await attemptsOf(endpoint.id);
    answer(410);
    await consume([{ deliveryId: first?.id }]);
    const attempts = await attemptsOf(endpoint.id);
    expect(attempts).toHaveLength(1);
    expect(attempts[0]).toMatchObject({ state: "failed", next_retry_at: null });
    expect(await endpointOf(base, key, endpoint.id)).toMatchObject({ enabled: false, disabledReason: "gone" });

    await deleteAVideo(key);
    expect(await attemptsOf(endpoint.id)).toHaveLength(1);
    const retry = await api(`${base}/${endpoint.id}/deliveries/${first?.id}/retry`, bearer(key, { method: "POST" }));
    expect(retry.status).toBe(409);
    expect(await errorCode(retry)).toBe("endpoint_disabled");

    // Re-enabled, it gets the next event's attempt.
    await api(`${base}/${endpoint.id}`, bearer(key, json("PATCH", { enabled: true })));
    await deleteAVideo(key);
    expect(await attemptsOf(endpoint.id)).toHaveLength(2);
  });

  it("does not send the scheduled retries of a disabled endpoint", async () => {
    const { base, key, endpoint } = await setUp();
    await deleteAVideo(key);
    const [first] = await attemptsOf(endpoint.id);
    answer(500);
    await consume([{ deliveryId: first?.id }]);
    const [, second] = await attemptsOf(endpoint.id);
    await api(`${base}/${endpoint.id}`, bearer(key, json("PATCH", { enabled: false })));
    const sent = answer(200);
    await consume([{ deliveryId: second?.id }]);
    expect(sent).toHaveLength(0);
    const rows = await attemptsOf(endpoint.id);
    expect(rows).toHaveLength(2);
    expect(rows[1]).toMatchObject({ state: "failed", error: "endpoint_disabled", next_retry_at: null });
  });
});

describe("attempt errors are categories", () => {
  it.each([
    ["a non-2xx answer", () => answer(503), "http_status", 503],
    [
      "a refused connection",
      () => vi.spyOn(globalThis, "fetch").mockRejectedValue(new TypeError("connect ECONNREFUSED 203.0.113.9:443")),
      "connection_failed",
      null,
    ],
    [
      "no answer in time",
      () =>
        vi.spyOn(globalThis, "fetch").mockRejectedValue(new DOMException("The operation timed out.", "TimeoutError")),
      "timeout",
      null,
    ],
  ])("records %s as its category, never the exception's text", async (_, stub, category, status) => {
    const { base, key, endpoint } = await setUp();
    await deleteAVideo(key);
    const [first] = await attemptsOf(endpoint.id);
    const logged = vi.spyOn(console, "error").mockImplementation(() => {});
    stub();
    await consume([{ deliveryId: first?.id }]);
    const page = (await (await api(`${base}/${endpoint.id}/deliveries?state=failed`, bearer(key))).json()) as {
      data: { error: string; responseStatus: number | null; nextRetryAt: string | null }[];
    };
    expect(page.data[0]).toMatchObject({ error: category, responseStatus: status, nextRetryAt: expect.any(String) });
    if (status === null) expect(logged.mock.calls.flat().join(" ")).toMatch(/ECONNREFUSED|timed out/);
  });

  it("fails an attempt whose stored URL is no longer allowed with invalid_target, sending nothing", async () => {
    const { key, endpoint } = await setUp();
    await deleteAVideo(key);
    await env.DB.prepare("UPDATE webhook_endpoints SET url = 'https://169.254.169.254/latest' WHERE id = ?")
      .bind(endpoint.id)
      .run();
    const [first] = await attemptsOf(endpoint.id);
    const sent = answer(200);
    await consume([{ deliveryId: first?.id }]);
    expect(sent).toHaveLength(0);
    expect((await attemptsOf(endpoint.id))[0]).toMatchObject({ state: "failed", error: "invalid_target" });
  });
});

describe("secret rotation", () => {
  it("signs with the new secret first, then the old one, for 24 hours", async () => {
    const { base, key, endpoint } = await setUp();
    const rotated = await api(`${base}/${endpoint.id}/rotate-secret`, bearer(key, { method: "POST" }));
    const { secret } = (await rotated.json()) as { secret: string };
    await deleteAVideo(key);
    const [first] = await attemptsOf(endpoint.id);
    const sent = answer(200);
    await consume([{ deliveryId: first?.id }]);
    const request = sent[0] as Request;
    const body = await request.text();
    const id = request.headers.get("webhook-id") ?? "";
    const timestamp = request.headers.get("webhook-timestamp") ?? "";
    expect(request.headers.get("webhook-signature")).toBe(
      `${await expectedSignature(secret, id, timestamp, body)} ${await expectedSignature(endpoint.secret ?? "", id, timestamp, body)}`,
    );

    // Past the overlap only the new secret signs.
    await env.DB.prepare("UPDATE webhook_endpoints SET previous_secret_until = ? WHERE id = ?")
      .bind(isoTime(Date.now() - 1000), endpoint.id)
      .run();
    await deleteAVideo(key);
    const [, next] = await attemptsOf(endpoint.id);
    await consume([{ deliveryId: next?.id }]);
    const later = sent[1] as Request;
    expect(later.headers.get("webhook-signature")).toBe(
      await expectedSignature(
        secret,
        later.headers.get("webhook-id") ?? "",
        later.headers.get("webhook-timestamp") ?? "",
        await later.text(),
      ),
    );
  });
});

describe("suspended accounts", () => {
  it("get no deliveries while suspended, and resume for new events after approval", async () => {
    const { key, endpoint, session } = await setUp();
    await deleteAVideo(key);
    const [first] = await attemptsOf(endpoint.id);
    await api(`/v1/admin/accounts/${session.accountId}/suspend`, { method: "POST", headers: ADMIN });
    const sent = answer(200);
    await consume([{ deliveryId: first?.id }]);
    expect(sent).toHaveLength(0);
    expect((await attemptsOf(endpoint.id))[0]).toMatchObject({
      state: "failed",
      error: "account_suspended",
      next_retry_at: null,
    });

    await api(`/v1/admin/accounts/${session.accountId}/approve`, { method: "POST", headers: ADMIN });
    await deleteAVideo(key);
    const [, fresh] = await attemptsOf(endpoint.id);
    await consume([{ deliveryId: fresh?.id }]);
    expect(sent).toHaveLength(1);
    expect((await attemptsOf(endpoint.id))[1]).toMatchObject({ state: "succeeded" });
  });
});

describe("the dead-letter queue", () => {
  it("fails the attempt as gave_up, and the sweeper does not send it again", async () => {
    const { key, endpoint } = await setUp();
    await deleteAVideo(key);
    const [first] = await attemptsOf(endpoint.id);
    await env.DB.prepare("UPDATE webhook_deliveries SET due_at = '2020-01-01T00:00:00.000Z' WHERE id = ?")
      .bind(first?.id)
      .run();
    const result = await consumeDeadLetters([{ deliveryId: first?.id }, { nonsense: true }]);
    expect(result.explicitAcks.sort()).toEqual(["d0", "d1"]);
    expect((await attemptsOf(endpoint.id))[0]).toMatchObject({ state: "failed", error: "gave_up" });

    const sendBatch = vi.spyOn(env.WEBHOOK_QUEUE, "sendBatch");
    await runScheduled();
    const resent = sendBatch.mock.calls.flatMap(([messages]) => [...messages].map((m) => m.body));
    expect(resent).not.toContainEqual({ deliveryId: first?.id });
  });

  it("leaves an attempt that finished meanwhile as it was", async () => {
    const { key, endpoint } = await setUp();
    await deleteAVideo(key);
    const [first] = await attemptsOf(endpoint.id);
    answer(200);
    await consume([{ deliveryId: first?.id }]);
    await consumeDeadLetters([{ deliveryId: first?.id }]);
    expect((await attemptsOf(endpoint.id))[0]).toMatchObject({ state: "succeeded" });
  });
});

describe("the sweeper", () => {
  it("sends again a pending attempt whose message was lost a minute ago, unless a consumer holds it", async () => {
    const { key, endpoint, project } = await setUp();
    await deleteAVideo(key);
    const [first] = await attemptsOf(endpoint.id);
    const message = { deliveryId: first?.id, endpointId: endpoint.id, projectId: project.id };
    const past = isoTime(Date.now() - 90_000);
    await env.DB.prepare("UPDATE webhook_deliveries SET due_at = ?, claimed_until = ? WHERE id = ?")
      .bind(past, isoTime(Date.now() + 60_000), first?.id)
      .run();
    const sendBatch = vi.spyOn(env.WEBHOOK_QUEUE, "sendBatch");
    const resent = () => sendBatch.mock.calls.flatMap(([messages]) => [...messages].map((m) => m.body));
    await runScheduled();
    expect(resent()).not.toContainEqual(message);
    await env.DB.prepare("UPDATE webhook_deliveries SET claimed_until = NULL WHERE id = ?").bind(first?.id).run();
    await runScheduled();
    expect(resent()).toContainEqual(message);
  });
});

describe("retention", () => {
  it("deletes attempts and published events older than 30 days, in batches, and nothing newer", async () => {
    const { key, endpoint } = await setUp();
    for (let i = 0; i < 3; i++) await deleteAVideo(key);
    const now = Date.now() + RETENTION_MS + 60_000;
    const keep = await deleteAVideo(key);
    // The newest event and its attempt are as young as `now` says.
    await env.DB.batch([
      env.DB.prepare("UPDATE outbox_events SET created_at = ?1, published_at = ?1 WHERE subject_id = ?2").bind(
        isoTime(now - 1000),
        keep,
      ),
      env.DB.prepare(
        "UPDATE webhook_deliveries SET created_at = ?1 WHERE event_id = (SELECT id FROM outbox_events WHERE subject_id = ?2)",
      ).bind(isoTime(now - 1000), keep),
    ]);
    // An old event never published is not deleted: it still has to be delivered.
    await env.DB.prepare(
      "UPDATE outbox_events SET published_at = NULL WHERE id = (SELECT event_id FROM webhook_deliveries WHERE endpoint_id = ? ORDER BY created_at LIMIT 1)",
    )
      .bind(endpoint.id)
      .run();
    const removed = await deleteExpiredDeliveries(env.DB, now);
    expect(removed.attempts).toBeGreaterThanOrEqual(3);
    const left = await attemptsOf(endpoint.id);
    expect(left).toHaveLength(1);
    const events = await env.DB.prepare(
      "SELECT subject_id, published_at FROM outbox_events WHERE project_id = (SELECT project_id FROM webhook_endpoints WHERE id = ?)",
    )
      .bind(endpoint.id)
      .all<{ subject_id: string; published_at: string | null }>();
    expect(events.results.map((e) => e.subject_id)).toContain(keep);
    expect(events.results.filter((e) => e.published_at === null)).toHaveLength(1);
    expect(events.results).toHaveLength(2);
  });
});
