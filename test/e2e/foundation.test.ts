import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Client } from "./client.ts";
import { type DevServer, E2E_ADMIN_TOKEN, startDevServer } from "./server.ts";

let server: DevServer;
beforeAll(async () => {
  server = await startDevServer();
});
afterAll(async () => {
  await server?.stop();
});

describe("a new user against the real dev server", () => {
  it("signs up, waits for approval, logs in, creates a project and a key, logs out", async () => {
    const client = new Client(server.baseUrl);
    const email = `flow-${Date.now()}@example.com`;
    const signup = await client.request("POST", "/v1/auth/signup", { body: { email, password: "e2e password 123" } });
    expect(signup.status).toBe(201);
    expect(signup.headers.get("x-request-id")).toMatch(/^[0-9A-Z]{26}$/);

    await client.request("POST", "/v1/auth/login", { body: { email, password: "e2e password 123" } });
    expect(client.cookie).toBeDefined();
    const early = await client.request("POST", "/v1/projects", { body: { name: "Too early" } });
    expect(early.status).toBe(403);
    expect(early.json.error.code).toBe("account_not_approved");

    const approved = await client.request("POST", `/v1/admin/accounts/${signup.json.id}/approve`, {
      headers: { authorization: `Bearer ${E2E_ADMIN_TOKEN}` },
    });
    expect(approved.json.approved).toBe(true);

    const project = await client.request("POST", "/v1/projects", { body: { name: "Launch" } });
    expect(project.status).toBe(201);
    expect(project.json).toMatchObject({ name: "Launch", plan: "trial" });
    expect(project.headers.get("ratelimit-policy")).toBe('"project_create";q=60;w=60');

    const key = await client.request("POST", `/v1/projects/${project.json.id}/api-keys`, {
      body: { name: "server", scopes: ["read", "write"], mode: "live" },
    });
    expect(key.status).toBe(201);
    expect(key.json.key).toMatch(/^svc_live_/);

    const listed = await client.request("GET", "/v1/projects");
    expect(listed.json.data.map((p: { id: string }) => p.id)).toEqual([project.json.id]);

    expect((await client.request("POST", "/v1/auth/logout")).status).toBe(204);
    expect(client.cookie).toBeUndefined();
    expect((await client.request("GET", "/v1/account")).status).toBe(401);
  });

  it("counts rate limits exactly across simultaneous HTTP requests", async () => {
    const client = new Client(server.baseUrl);
    await client.onboard();
    const responses = await Promise.all(
      Array.from({ length: 70 }, (_, i) => client.request("POST", "/v1/projects", { body: { name: `p${i}` } })),
    );
    expect(responses.filter((r) => r.status === 201)).toHaveLength(60);
    const limited = responses.filter((r) => r.status === 429);
    expect(limited).toHaveLength(10);
    expect(limited[0]?.json.error.code).toBe("rate_limited");
    expect(Number(limited[0]?.headers.get("retry-after"))).toBeGreaterThan(0);
  });

  it("edits encoding settings safely with ETag and If-Match", async () => {
    const client = new Client(server.baseUrl);
    await client.onboard();
    const project = await client.request("POST", "/v1/projects", { body: { name: "encoding" } });
    const path = `/v1/projects/${project.json.id}/encoding-settings`;
    const read = await client.request("GET", path);
    expect(read.json.enabledResolutions).toEqual(["360p", "720p", "1080p"]);
    const etag = read.headers.get("etag") ?? "";
    const edit = await client.request("PATCH", path, {
      body: { enabledResolutions: ["1080p", "240p"], watermark: { opacity: 0.5 } },
      headers: { "if-match": etag },
    });
    expect(edit.status).toBe(200);
    expect(edit.json.enabledResolutions).toEqual(["240p", "1080p"]);
    const stale = await client.request("PATCH", path, {
      body: { mp4FallbackEnabled: true },
      headers: { "if-match": etag },
    });
    expect(stale.status).toBe(412);
    const codec = await client.request("PATCH", path, { body: { outputCodecs: ["vp9"] } });
    expect(codec.json.error.code).toBe("codec_unavailable");
  });

  it("answers unknown routes, wrong methods and malformed bodies with JSON errors", async () => {
    const client = new Client(server.baseUrl);
    await client.onboard();
    expect((await client.request("GET", "/v1/unknown")).json.error.code).toBe("not_found");
    const wrongMethod = await client.request("PUT", "/v1/projects");
    expect(wrongMethod.status).toBe(405);
    expect(wrongMethod.headers.get("allow")).toBe("GET, HEAD, POST");
    const malformed = await client.request("POST", "/v1/projects", {
      body: undefined,
      headers: { "content-type": "application/json" },
    });
    expect(malformed.status).toBe(400);
    expect(malformed.json.error.code).toBe("invalid_body");
    const docs = await client.request("GET", "/v1/openapi.json");
    expect(docs.json.openapi).toBe("3.1.0");
  });
});
