import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { ADMIN, api, bearer, errorCode, json, newKey, newProject, newSession, withCookie } from "../helpers";

describe("POST /v1/projects", () => {
  it("creates a project on the account's current plan", async () => {
    const session = await newSession();
    const response = await api("/v1/projects", withCookie(session, json("POST", { name: "  Launch videos  " })));
    expect(response.status).toBe(201);
    const project = (await response.json()) as Record<string, unknown>;
    expect(project).toMatchObject({ name: "Launch videos", plan: "trial" });
    expect(Object.keys(project).sort()).toEqual(["createdAt", "id", "name", "plan"]);
  });

  it("places the project on the operator's plan after the trial", async () => {
    const session = await newSession();
    await env.DB.prepare("UPDATE accounts SET trial_ends_at = '2020-01-01T00:00:00.000Z' WHERE id = ?")
      .bind(session.accountId)
      .run();
    expect((await newProject(session)).plan).toBe("free");
    await api(`/v1/admin/accounts/${session.accountId}/plan`, json("PUT", { plan: "business" }, ADMIN));
    expect((await newProject(session)).plan).toBe("business");
  });

  it.each([
    ["an empty name", { name: "" }],
    ["a blank name", { name: "   " }],
    ["a name over 100 characters", { name: "x".repeat(101) }],
    ["a control character", { name: "bad\u0007name" }],
    ["a newline", { name: "two\nlines" }],
    ["a missing name", {}],
    ["a number", { name: 42 }],
    ["null", { name: null }],
    ["an unknown field", { name: "ok", color: "red" }],
  ])("refuses %s with invalid_name", async (_, body) => {
    const session = await newSession();
    const response = await api("/v1/projects", withCookie(session, json("POST", body)));
    expect(response.status).toBe(400);
    expect(await errorCode(response)).toBe("invalid_name");
  });

  it("accepts exactly 100 characters after trimming", async () => {
    const session = await newSession();
    const response = await api("/v1/projects", withCookie(session, json("POST", { name: ` ${"é".repeat(100)} ` })));
    expect(response.status).toBe(201);
  });

  it("refuses unparseable JSON and a wrong content type with invalid_body", async () => {
    const session = await newSession();
    const broken = await api("/v1/projects", withCookie(session, json("POST", "{")));
    expect(await errorCode(broken)).toBe("invalid_body");
    const text = await api(
      "/v1/projects",
      withCookie(session, { method: "POST", headers: { "content-type": "text/plain" }, body: '{"name":"x"}' }),
    );
    expect(text.status).toBe(400);
    expect(await errorCode(text)).toBe("invalid_body");
  });

  it("refuses unapproved accounts and API keys", async () => {
    const pending = await newSession({ approved: false });
    const refused = await api("/v1/projects", withCookie(pending, json("POST", { name: "x" })));
    expect(refused.status).toBe(403);
    expect(await errorCode(refused)).toBe("account_not_approved");

    const session = await newSession();
    const key = await newKey(session, (await newProject(session)).id);
    const byKey = await api("/v1/projects", bearer(key, json("POST", { name: "x" })));
    expect(byKey.status).toBe(401);
    expect(await errorCode(byKey)).toBe("unauthorized");
  });

  it("checks approval before the body", async () => {
    const pending = await newSession({ approved: false });
    const response = await api("/v1/projects", withCookie(pending, json("POST", { name: "" })));
    expect(await errorCode(response)).toBe("account_not_approved");
  });
});

describe("GET /v1/projects", () => {
  it("lists only the caller's projects, newest first", async () => {
    const session = await newSession();
    const other = await newSession();
    const first = await newProject(session, "first");
    const second = await newProject(session, "second");
    await newProject(other, "not mine");
    const response = await api("/v1/projects", withCookie(session));
    const { data } = (await response.json()) as { data: { id: string }[] };
    expect(data.map((project) => project.id)).toEqual([second.id, first.id]);
  });

  it("reads one project, case-insensitively, and hides foreign ones", async () => {
    const session = await newSession();
    const other = await newSession();
    const project = await newProject(session, "mine");
    const read = await api(`/v1/projects/${project.id.toLowerCase()}`, withCookie(session));
    expect(read.status).toBe(200);
    expect(await read.json()).toMatchObject({ id: project.id, name: "mine" });
    for (const id of [project.id, "01ARZ3NDEKTSV4RRFFQ69G5FAV", "nope"]) {
      const response = await api(`/v1/projects/${id}`, withCookie(other));
      expect(response.status).toBe(404);
      expect(await errorCode(response)).toBe("not_found");
    }
  });
});

describe("API keys", () => {
  it("creates a key shown once and stored only as a hash", async () => {
    const session = await newSession();
    const project = await newProject(session);
    const response = await api(
      `/v1/projects/${project.id}/api-keys`,
      withCookie(session, json("POST", { name: "CI", scopes: ["write", "read"], mode: "live" })),
    );
    expect(response.status).toBe(201);
    const created = (await response.json()) as Record<string, unknown>;
    expect(created).toMatchObject({ name: "CI", scopes: ["read", "write"], mode: "live", lastUsedAt: null });
    expect(String(created.key)).toMatch(/^svc_live_[A-Za-z0-9_-]{43}$/);
    const row = await env.DB.prepare("SELECT key_hash FROM api_keys WHERE id = ?")
      .bind(created.id)
      .first<{ key_hash: string }>();
    expect(row?.key_hash).toMatch(/^[0-9a-f]{64}$/);

    const list = await api(`/v1/projects/${project.id}/api-keys`, withCookie(session));
    const { data } = (await list.json()) as { data: Record<string, unknown>[] };
    expect(data).toHaveLength(1);
    expect(data[0]).not.toHaveProperty("key");
    expect(data[0]).toMatchObject({ id: created.id, name: "CI" });
  });

  it("revokes a key, which is refused from then on", async () => {
    const session = await newSession();
    const project = await newProject(session);
    const key = await newKey(session, project.id, ["read"]);
    expect((await api("/v1/videos", bearer(key))).status).toBe(200);
    const { data } = (await (await api(`/v1/projects/${project.id}/api-keys`, withCookie(session))).json()) as {
      data: { id: string }[];
    };
    const keyId = data[0]?.id ?? "";
    expect(
      (await api(`/v1/projects/${project.id}/api-keys/${keyId}`, withCookie(session, { method: "DELETE" }))).status,
    ).toBe(204);
    const again = await api(`/v1/projects/${project.id}/api-keys/${keyId}`, withCookie(session, { method: "DELETE" }));
    expect(again.status).toBe(404);
    expect(await errorCode(again)).toBe("not_found");
    const list = await api(`/v1/projects/${project.id}/api-keys`, withCookie(session));
    expect(((await list.json()) as { data: unknown[] }).data).toHaveLength(0);
    // A revoked key is no credential at all.
    const refused = await api("/v1/videos", bearer(key));
    expect(refused.status).toBe(401);
    expect(await errorCode(refused)).toBe("unauthorized");
  });

  it.each([
    ["no scopes", { name: "k", scopes: [], mode: "test" }],
    ["an unknown scope", { name: "k", scopes: ["admin"], mode: "test" }],
    ["a repeated scope", { name: "k", scopes: ["read", "read"], mode: "test" }],
    ["an unknown mode", { name: "k", scopes: ["read"], mode: "prod" }],
    ["a missing mode", { name: "k", scopes: ["read"] }],
    ["a missing name", { scopes: ["read"], mode: "test" }],
    ["an empty name", { name: "", scopes: ["read"], mode: "test" }],
    ["an unknown field", { name: "k", scopes: ["read"], mode: "test", expires: 1 }],
  ])("refuses %s with invalid_body", async (_, body) => {
    const session = await newSession();
    const project = await newProject(session);
    const response = await api(`/v1/projects/${project.id}/api-keys`, withCookie(session, json("POST", body)));
    expect(response.status).toBe(400);
    expect(await errorCode(response)).toBe("invalid_body");
  });

  it("answers not_found for another account's project", async () => {
    const owner = await newSession();
    const other = await newSession();
    const project = await newProject(owner);
    const create = await api(
      `/v1/projects/${project.id}/api-keys`,
      withCookie(other, json("POST", { name: "k", scopes: ["read"], mode: "test" })),
    );
    expect(create.status).toBe(404);
    expect(await errorCode(create)).toBe("not_found");
    expect((await api(`/v1/projects/${project.id}/api-keys`, withCookie(other))).status).toBe(404);
  });
});
