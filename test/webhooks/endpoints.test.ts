import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { QUOTAS } from "../../src/rate-limit/policies";
import { api, bearer, errorCode, json, newKey, newWorkspace, withCookie } from "../helpers";
import { apiWith } from "../support/app";
import { type Endpoint, setUp } from "./support";

async function endpointRow(id: string) {
  return env.DB.prepare("SELECT * FROM webhook_endpoints WHERE id = ?").bind(id).first();
}

describe("creating endpoints: safe targets", () => {
  it.each([
    "https://10.0.0.8/hook",
    "https://2852039166/hook",
    "https://0xa9fea9fe/hook",
    "https://[::ffff:169.254.169.254]/hook",
    "https://[fd12::1]/hook",
    "https://metadata.internal/hook",
    "https://nas.local/hook",
    "https://127.0.0.1/hook",
    "https://localhost/hook",
  ])("refuses %s with invalid_body naming url, and writes nothing", async (url) => {
    const { key, project } = await newWorkspace();
    const response = await api(`/v1/projects/${project.id}/webhook-endpoints`, bearer(key, json("POST", { url })));
    expect(response.status).toBe(400);
    const body = (await response.json()) as { error: { code: string; details: { path: string }[] } };
    expect(body.error.code).toBe("invalid_body");
    expect(body.error.details.map((d) => d.path)).toEqual(["url"]);
    const count = await env.DB.prepare("SELECT count(*) AS n FROM webhook_endpoints WHERE project_id = ?")
      .bind(project.id)
      .first<number>("n");
    expect(count).toBe(0);
  });

  it.each([
    "https://metadata.google.internal../hook",
    "https://printer.local../hook",
    "https://intranet../hook",
    "http://localhost../hook",
    "https://hooks..example.com/hook",
  ])("refuses the name with an empty label %s on create and update, in local development too", async (url) => {
    const { key, project } = await newWorkspace();
    const path = `/v1/projects/${project.id}/webhook-endpoints`;
    const created = await api(path, bearer(key, json("POST", { url: "https://hooks.example.com/in" })));
    const { id } = (await created.json()) as Endpoint;
    for (const rules of [{ ALLOW_HTTP_WEBHOOKS: "false" }, { ALLOW_HTTP_WEBHOOKS: "true" }]) {
      for (const [method, target] of [
        ["POST", path],
        ["PATCH", `${path}/${id}`],
      ] as const) {
        const response = await apiWith(rules, target, bearer(key, json(method, { url })));
        expect(response.status).toBe(400);
        const body = (await response.json()) as { error: { code: string; details: { path: string }[] } };
        expect(body.error.code).toBe("invalid_body");
        expect(body.error.details.map((d) => d.path)).toEqual(["url"]);
      }
    }
    const row = await endpointRow(id);
    expect(row?.url).toBe("https://hooks.example.com/in");
  });

  it("refuses private addresses even where http is allowed, but allows loopback there", async () => {
    const { key, project } = await newWorkspace();
    const path = `/v1/projects/${project.id}/webhook-endpoints`;
    const dev = { ALLOW_HTTP_WEBHOOKS: "true" };
    expect((await apiWith(dev, path, bearer(key, json("POST", { url: "http://192.168.1.1/" })))).status).toBe(400);
    expect((await apiWith(dev, path, bearer(key, json("POST", { url: "http://localhost:9000/" })))).status).toBe(201);
  });

  it(`holds at most ${QUOTAS.webhook_endpoints.limit} endpoints per project, also when created at once`, async () => {
    const { key, project } = await newWorkspace();
    const path = `/v1/projects/${project.id}/webhook-endpoints`;
    const statuses = await Promise.all(
      Array.from({ length: QUOTAS.webhook_endpoints.limit + 5 }, (_, i) =>
        api(path, bearer(key, json("POST", { url: `https://hooks.example.com/${i}` }))).then((r) => r.status),
      ),
    );
    expect(statuses.filter((s) => s === 201)).toHaveLength(QUOTAS.webhook_endpoints.limit);
    expect(statuses.filter((s) => s === 409)).toHaveLength(5);
    const over = await api(path, bearer(key, json("POST", { url: "https://hooks.example.com/x" })));
    expect(over.status).toBe(409);
    expect(await errorCode(over)).toBe("quota_exceeded");
    // Deleting one makes room again.
    const listed = (await (await api(path, bearer(key))).json()) as { data: Endpoint[] };
    expect(listed.data).toHaveLength(QUOTAS.webhook_endpoints.limit);
    await api(`${path}/${listed.data[0]?.id}`, bearer(key, { method: "DELETE" }));
    expect((await api(path, bearer(key, json("POST", { url: "https://hooks.example.com/y" })))).status).toBe(201);
  });

  it(`holds the ${QUOTAS.webhook_endpoints.limit} per mode: test endpoints take no room from live ones`, async () => {
    const { key, project, session } = await newWorkspace({ mode: "test" });
    const path = `/v1/projects/${project.id}/webhook-endpoints`;
    for (let i = 0; i < QUOTAS.webhook_endpoints.limit; i++) {
      expect((await api(path, bearer(key, json("POST", { url: `https://hooks.example.com/${i}` })))).status).toBe(201);
    }
    const over = await api(path, bearer(key, json("POST", { url: "https://hooks.example.com/x" })));
    expect(await errorCode(over)).toBe("quota_exceeded");
    const live = await newKey(session, project.id, ["read", "write"], "live");
    expect((await api(path, bearer(live, json("POST", { url: "https://hooks.example.com/live" })))).status).toBe(201);
    const cookie = await api(path, withCookie(session, json("POST", { url: "https://hooks.example.com/cookie" })));
    expect(cookie.status).toBe(201);
    expect(
      (await api(`${path}?mode=test`, withCookie(session, json("POST", { url: "https://hooks.example.com/t" }))))
        .status,
    ).toBe(409);
  });
});

describe("PATCH an endpoint", () => {
  it("changes url, event types, description and enabled, with disabledReason", async () => {
    const { base, key, endpoint } = await setUp();
    expect(endpoint.disabledReason).toBeNull();
    const path = `${base}/${endpoint.id}`;
    const patched = await api(
      path,
      bearer(key, json("PATCH", { url: "https://other.example.com/h", description: null, enabled: false })),
    );
    expect(patched.status).toBe(200);
    const body = (await patched.json()) as Endpoint;
    expect(body).toMatchObject({
      id: endpoint.id,
      url: "https://other.example.com/h",
      description: null,
      enabled: false,
      disabledReason: "manual",
      eventTypes: [
        "video.deleted",
        "video.playable",
        "video.ready",
        "video.errored",
        "video.captions.ready",
        "video.captions.errored",
      ],
    });
    expect(body).not.toHaveProperty("secret");
    const enabled = (await (await api(path, bearer(key, json("PATCH", { enabled: true })))).json()) as Endpoint;
    expect(enabled).toMatchObject({ enabled: true, disabledReason: null, url: "https://other.example.com/h" });
    const same = (await (await api(path, bearer(key, json("PATCH", {})))).json()) as Endpoint;
    expect(same).toEqual(enabled);
  });

  it("keeps 'gone' when an endpoint disabled by a 410 is disabled again", async () => {
    const { base, key, endpoint } = await setUp();
    await env.DB.prepare("UPDATE webhook_endpoints SET enabled = 0, disabled_reason = 'gone' WHERE id = ?")
      .bind(endpoint.id)
      .run();
    const body = (await (
      await api(`${base}/${endpoint.id}`, bearer(key, json("PATCH", { enabled: false })))
    ).json()) as Endpoint;
    expect(body.disabledReason).toBe("gone");
  });

  it.each([
    ["an unsafe url", { url: "https://169.254.169.254/" }],
    ["an unknown field", { secret: "whsec_mine" }],
    ["a wrong type", { enabled: "yes" }],
    ["no event types", { eventTypes: [] }],
    ["an unknown event type", { eventTypes: ["video.created"] }],
  ])("refuses %s with invalid_body and changes nothing", async (_, body) => {
    const { base, key, endpoint } = await setUp();
    const before = await endpointRow(endpoint.id);
    const response = await api(`${base}/${endpoint.id}`, bearer(key, json("PATCH", body)));
    expect(response.status).toBe(400);
    expect(await errorCode(response)).toBe("invalid_body");
    expect(await endpointRow(endpoint.id)).toEqual(before);
  });

  it("answers endpoint_not_found for a foreign or unknown endpoint, and checks scope", async () => {
    const { base, key, endpoint, session, project } = await setUp();
    const other = await newWorkspace();
    const foreign = await api(
      `/v1/projects/${other.project.id}/webhook-endpoints/${endpoint.id}`,
      bearer(other.key, json("PATCH", { enabled: false })),
    );
    expect(foreign.status).toBe(404);
    expect(await errorCode(foreign)).toBe("endpoint_not_found");
    for (const id of ["01ARZ3NDEKTSV4RRFFQ69G5FAV", "nope"]) {
      const response = await api(`${base}/${id}`, bearer(key, json("PATCH", { enabled: false })));
      expect(await errorCode(response)).toBe("endpoint_not_found");
    }
    const reader = await newKey(session, project.id, ["read"]);
    const refused = await api(`${base}/${endpoint.id}`, bearer(reader, json("PATCH", { enabled: false })));
    expect(await errorCode(refused)).toBe("insufficient_scope");
    expect(((await endpointRow(endpoint.id)) as { enabled: number }).enabled).toBe(1);
  });

  it("works under cookie auth", async () => {
    const { base, session, endpoint } = await setUp();
    const response = await api(`${base}/${endpoint.id}`, withCookie(session, json("PATCH", { description: "x" })));
    expect(response.status).toBe(200);
  });
});

describe("rotate-secret", () => {
  it("returns a new secret and keeps the old one signing for 24 hours", async () => {
    const { base, key, endpoint } = await setUp();
    const before = Date.now();
    const response = await api(`${base}/${endpoint.id}/rotate-secret`, bearer(key, { method: "POST" }));
    expect(response.status).toBe(200);
    const { secret } = (await response.json()) as { secret: string };
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{32}$/);
    expect(secret).not.toBe(endpoint.secret);
    const row = (await endpointRow(endpoint.id)) as {
      secret: string;
      previous_secret: string;
      previous_secret_until: string;
    };
    expect(row.secret).toBe(secret);
    expect(row.previous_secret).toBe(endpoint.secret);
    const overlap = Date.parse(row.previous_secret_until) - before;
    expect(overlap).toBeGreaterThanOrEqual(24 * 3600 * 1000);
    expect(overlap).toBeLessThan(24 * 3600 * 1000 + 60_000);
    const unknown = await api(`${base}/01ARZ3NDEKTSV4RRFFQ69G5FAV/rotate-secret`, bearer(key, { method: "POST" }));
    expect(await errorCode(unknown)).toBe("endpoint_not_found");
  });
});
