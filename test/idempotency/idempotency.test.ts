import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { deleteExpiredKeys } from "../../src/idempotency/middleware";
import { api, bearer, errorCode, json, newKey, newVideos, newWorkspace, withCookie } from "../helpers";
import { apiWith } from "../support/app";
import { InstrumentedD1 } from "../support/d1";

const withKey = (init: RequestInit, key: string): RequestInit => ({
  ...init,
  headers: { ...(init.headers as Record<string, string>), "idempotency-key": key },
});

async function videoCount(projectId: string): Promise<number> {
  return (
    (await env.DB.prepare("SELECT count(*) AS n FROM videos WHERE project_id = ?")
      .bind(projectId)
      .first<number>("n")) ?? 0
  );
}

describe("Idempotency-Key", () => {
  it("replays a 2xx answer byte for byte with Idempotent-Replayed, and does nothing more", async () => {
    const { key, project } = await newWorkspace();
    const create = () => api("/v1/videos", withKey(bearer(key, json("POST", { title: "Once" })), "create-1"));
    const first = await create();
    expect(first.status).toBe(201);
    expect(first.headers.get("idempotent-replayed")).toBeNull();
    const again = await create();
    expect(again.status).toBe(201);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(again.headers.get("content-type")).toBe(first.headers.get("content-type"));
    expect(await again.text()).toBe(await first.text());
    expect(await videoCount(project.id)).toBe(1);
  });

  it("refuses the key with another body (422), and is scoped to the caller, the method and the target", async () => {
    const { key, session, project } = await newWorkspace();
    const other = await newKey(session, project.id, ["read", "write"]);
    const body = (title: string) => json("POST", { title });
    expect((await api("/v1/videos", withKey(bearer(key, body("a")), "k"))).status).toBe(201);
    const reused = await api("/v1/videos", withKey(bearer(key, body("b")), "k"));
    expect(reused.status).toBe(422);
    expect(await errorCode(reused)).toBe("idempotency_key_reused");
    // Another API key, or another query, is another scope: the request runs.
    expect((await api("/v1/videos", withKey(bearer(other, body("a")), "k"))).status).toBe(201);
    const elsewhere = await api(`/v1/videos?projectId=${project.id}`, withKey(bearer(key, body("a")), "k"));
    expect(elsewhere.headers.get("idempotent-replayed")).toBeNull();
    // A session's key belongs to its account.
    const bySession = await api(
      `/v1/videos?projectId=${project.id}`,
      withKey(withCookie(session, body("c")), "session-key"),
    );
    expect(bySession.status).toBe(201);
    expect(await videoCount(project.id)).toBe(4);
  });

  it("leaves the key unused after an answer that is not 2xx, so a retry runs", async () => {
    const { key } = await newWorkspace();
    const bad = await api("/v1/videos", withKey(bearer(key, json("POST", { title: "" })), "retry-me"));
    expect(bad.status).toBe(400);
    const good = await api("/v1/videos", withKey(bearer(key, json("POST", { title: "" })), "retry-me"));
    expect(good.status).toBe(400);
    expect(good.headers.get("idempotent-replayed")).toBeNull();
    const fixed = await api("/v1/videos", withKey(bearer(key, json("POST", { title: "Fixed" })), "retry-me"));
    expect(fixed.status).toBe(201);
  });

  it("answers 409 idempotency_key_in_use with Retry-After while the first request runs", async () => {
    const { key } = await newWorkspace();
    const keyId = await env.DB.prepare(
      "SELECT id FROM api_keys WHERE key_hash IS NOT NULL ORDER BY created_at DESC LIMIT 1",
    ).first<string>("id");
    const body = JSON.stringify({ title: "x" });
    const hash = [...new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(body)))]
      .map((b) => b.toString(16).padStart(2, "0"))
      .join("");
    await env.DB.prepare(
      `INSERT INTO idempotency_keys (scope, method, target, key, body_hash, state, locked_until, created_at)
       VALUES (?, 'POST', '/v1/videos', 'busy', ?, 'running', ?, ?)`,
    )
      .bind(`key:${keyId}`, hash, new Date(Date.now() + 30_000).toISOString(), new Date().toISOString())
      .run();
    const response = await api("/v1/videos", withKey(bearer(key, json("POST", body)), "busy"));
    expect(response.status).toBe(409);
    expect(await errorCode(response)).toBe("idempotency_key_in_use");
    expect(Number(response.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
  });

  it("runs exactly one of two simultaneous requests with one key", async () => {
    const { key, project } = await newWorkspace();
    const send = () => api("/v1/videos", withKey(bearer(key, json("POST", { title: "race" })), "race"));
    const answers = await Promise.all([send(), send(), send()]);
    expect(answers.every((a) => a.status === 201 || a.status === 409)).toBe(true);
    expect(answers.filter((a) => a.status === 201 && a.headers.get("idempotent-replayed") === null)).toHaveLength(1);
    expect(await videoCount(project.id)).toBe(1);
  });

  it("replays an answer that carries a secret exactly, and keeps it encrypted at rest", async () => {
    const { session, project } = await newWorkspace();
    const create = () =>
      api(
        `/v1/projects/${project.id}/api-keys`,
        withKey(withCookie(session, json("POST", { name: "ci", scopes: ["read"], mode: "test" })), "mint"),
      );
    const first = await create();
    const secret = ((await first.clone().json()) as { key: string }).key;
    const again = await create();
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(((await again.json()) as { key: string }).key).toBe(secret);
    const stored = await env.DB.prepare("SELECT response FROM idempotency_keys WHERE key = 'mint'").first<string>(
      "response",
    );
    expect(stored).not.toContain(secret);
    expect(stored).not.toContain("svc_test_");
  });

  it("leaves the key unused after a bulk answer a retry should run again", async () => {
    const { key } = await newWorkspace();
    const ids = await newVideos(key, 2);
    const failing = new InstrumentedD1(env.DB, (sql) => sql.includes("SET deleted_at"));
    const body = json("POST", { action: "delete", videoIds: ids });
    const stopped = await apiWith({ DB: failing.binding }, "/v1/videos/bulk", withKey(bearer(key, body), "bulk"));
    expect(stopped.status).toBe(200);
    expect(JSON.stringify(await stopped.json())).toContain("internal_error");
    const retried = await api("/v1/videos/bulk", withKey(bearer(key, body), "bulk"));
    expect(retried.headers.get("idempotent-replayed")).toBeNull();
    expect(await retried.json()).toEqual({ results: ids.map((id) => ({ id, ok: true })) });
  });

  it.each([
    ["256 characters", "k".repeat(256)],
    ["an empty value", ""],
    ["a tab", "a\tb"],
    ["a character outside ASCII", "caf\u00e9"],
  ])("refuses a key of %s with invalid_idempotency_key", async (_, value) => {
    const { key } = await newWorkspace();
    const response = await api("/v1/videos", withKey(bearer(key, json("POST", {})), value));
    expect(response.status).toBe(400);
    expect(await errorCode(response)).toBe("invalid_idempotency_key");
  });

  it("takes 255 printable characters", async () => {
    const { key } = await newWorkspace();
    const response = await api("/v1/videos", withKey(bearer(key, json("POST", {})), "~".repeat(255)));
    expect(response.status).toBe(201);
  });

  it("forgets keys after 24 hours, in the scheduled sweep", async () => {
    const old = new Date(Date.now() - 25 * 3600_000).toISOString();
    await env.DB.prepare(
      `INSERT INTO idempotency_keys (scope, method, target, key, body_hash, state, response, created_at)
       VALUES ('key:old', 'POST', '/v1/videos', 'old', 'h', 'done', 'x', ?)`,
    )
      .bind(old)
      .run();
    expect(await deleteExpiredKeys(env.DB)).toBeGreaterThanOrEqual(1);
    expect(
      await env.DB.prepare("SELECT count(*) AS n FROM idempotency_keys WHERE key = 'old'").first<number>("n"),
    ).toBe(0);
  });
});
