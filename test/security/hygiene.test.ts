import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import { isoTime } from "../../src/lib/time";
import { sweepExpiredUploads } from "../../src/uploads/sweeper";
import { IMAGES } from "../fixtures/images";
import {
  ADMIN,
  api,
  bearer,
  errorCode,
  json,
  newSession,
  newVideo,
  newWorkspace,
  signUp,
  withCookie,
} from "../helpers";
import { apiWith } from "../support/app";
import { runScheduled } from "../support/handlers";

afterEach(() => {
  vi.restoreAllMocks();
});

describe("headers on every response", () => {
  it("nosniff everywhere, no-store on every /v1 answer, public images keep their cache", async () => {
    const { key, session } = await newWorkspace();
    const { video } = await newVideo(key);
    const responses = await Promise.all([
      api("/v1/account", withCookie(session)),
      api("/v1/no-such-route"),
      api("/v1/account", { method: "PUT" }),
      api("/v1/projects", json("POST", "{not json")),
      api(`/v1/videos/${video.id}`, bearer(key)),
      api("/v1/openapi.json"),
    ]);
    for (const response of responses) {
      expect(response.headers.get("x-content-type-options"), response.url).toBe("nosniff");
      expect(response.headers.get("cache-control"), response.url).toBe("no-store");
    }
    const docs = await api("/docs");
    expect(docs.headers.get("x-content-type-options")).toBe("nosniff");
    const put = await api(
      `/v1/videos/${video.id}/thumbnail`,
      bearer(key, { method: "PUT", headers: { "content-type": "image/png" }, body: IMAGES.rgbPng }),
    );
    const { thumbnailUrl } = (await put.json()) as { thumbnailUrl: string };
    const image = await api(new URL(thumbnailUrl).pathname);
    expect(image.status).toBe(200);
    expect(image.headers.get("cache-control")).toMatch(/immutable/);
    expect(image.headers.get("x-content-type-options")).toBe("nosniff");
  });
});

describe("no storage service's words in an answer", () => {
  it("completing with a bogus part says what is wrong in this API's words", async () => {
    const { key } = await newWorkspace();
    const { video } = await newVideo(key);
    vi.spyOn(console, "error").mockImplementation(() => {});
    const response = await api(
      `/v1/videos/${video.id}/upload/complete`,
      bearer(key, json("POST", { parts: [{ partNumber: 1, etag: "bogus" }] })),
    );
    expect(response.status).toBe(400);
    const { error } = (await response.json()) as { error: { code: string; requestId: string } };
    expect(error.code).toBe("invalid_body");
    // The request id is left out: a random ULID may well spell "R2".
    const { requestId: _, ...words } = error;
    expect(JSON.stringify(words)).not.toMatch(/completeMultipartUpload|\(100\d\d\)|R2|multipart/i);
  });
});

describe("sessions end", () => {
  it("suspending an account ends its sessions", async () => {
    const session = await newSession();
    await api(`/v1/admin/accounts/${session.accountId}/suspend`, { method: "POST", headers: ADMIN });
    const left = await env.DB.prepare("SELECT count(*) AS n FROM sessions WHERE account_id = ?")
      .bind(session.accountId)
      .first<number>("n");
    expect(left).toBe(0);
    expect(await errorCode(await api("/v1/account", withCookie(session)))).toBe("unauthorized");
  });

  it("expired sessions are purged by the scheduled handler", async () => {
    const session = await newSession();
    const live = await newSession();
    await env.DB.prepare("UPDATE sessions SET expires_at = ? WHERE account_id = ?")
      .bind(isoTime(Date.now() - 1000), session.accountId)
      .run();
    await runScheduled();
    const count = (id: string) =>
      env.DB.prepare("SELECT count(*) AS n FROM sessions WHERE account_id = ?").bind(id).first<number>("n");
    expect(await count(session.accountId)).toBe(0);
    expect(await count(live.accountId)).toBe(1);
  });
});

describe("abandoned uploads", () => {
  it("are aborted in R2 once their session expired, leaving live ones alone", async () => {
    const { key } = await newWorkspace();
    const expired = (await newVideo(key)).video;
    const live = (await newVideo(key)).video;
    const row = (id: string) =>
      env.DB.prepare("SELECT source_key, upload_r2_id FROM videos WHERE id = ?")
        .bind(id)
        .first<{ source_key: string; upload_r2_id: string | null }>();
    const before = await row(expired.id);
    await env.DB.prepare("UPDATE videos SET upload_expires_at = ? WHERE id = ?")
      .bind(isoTime(Date.now() - 1000), expired.id)
      .run();
    expect(await sweepExpiredUploads({ db: env.DB, media: env.MEDIA })).toBeGreaterThanOrEqual(1);
    expect((await row(expired.id))?.upload_r2_id).toBeNull();
    expect((await row(live.id))?.upload_r2_id).not.toBeNull();
    const upload = env.MEDIA.resumeMultipartUpload(before?.source_key ?? "", before?.upload_r2_id ?? "");
    await expect(upload.uploadPart(1, "x")).rejects.toThrow();
    const part = await api(
      `/v1/videos/${expired.id}/upload/parts/1`,
      bearer(key, { method: "PUT", body: "abc", headers: { "content-length": "3" } }),
    );
    expect(await errorCode(part)).toBe("upload_not_active");
  });
});

describe("production configuration", () => {
  const production = { ENVIRONMENT: "production", PUBLIC_BASE_URL: "https://api.example.com" };
  const longToken = "operator-token-long-enough-0123456789";

  it.each([
    ["PUBLIC_BASE_URL", { ...production, PUBLIC_BASE_URL: "", ADMIN_TOKEN: longToken }],
    ["ADMIN_TOKEN", { ...production, ADMIN_TOKEN: "short" }],
    ["CURSOR_SECRET", { ...production, ADMIN_TOKEN: longToken, CURSOR_SECRET: "" }],
    ["PLAYBACK_SECRET", { ...production, ADMIN_TOKEN: longToken, PLAYBACK_SECRET: "too-short" }],
    ["UPLOAD_URL_SECRET", { ...production, ADMIN_TOKEN: longToken, UPLOAD_URL_SECRET: "" }],
    ["IDEMPOTENCY_SECRET", { ...production, ADMIN_TOKEN: longToken, IDEMPOTENCY_SECRET: "short" }],
    ["ENCODER_CALLBACK_SECRET", { ...production, ADMIN_TOKEN: longToken, ENCODER_CALLBACK_SECRET: " " }],
    ["CURSOR_SECRET_PREVIOUS", { ...production, ADMIN_TOKEN: longToken, CURSOR_SECRET_PREVIOUS: "too-short" }],
  ])("refuses to run without a proper %s, naming it in the log", async (name, vars) => {
    const logged = vi.spyOn(console, "error").mockImplementation(() => {});
    const response = await apiWith(vars, "/v1/openapi.json");
    expect(response.status).toBe(500);
    const body = (await response.json()) as { error: { code: string; message: string; requestId: string } };
    expect(body.error.code).toBe("internal_error");
    expect(body.error.message).not.toContain(name);
    expect(response.headers.get("x-request-id")).toBe(body.error.requestId);
    expect(logged.mock.calls.flat().join(" ")).toContain(name);
  });

  it("puts public URLs on PUBLIC_BASE_URL, whatever Host the client sent", async () => {
    const { key } = await newWorkspace();
    const { video } = await newVideo(key);
    const response = await apiWith(
      { ...production, ADMIN_TOKEN: longToken },
      `/v1/videos/${video.id}`,
      bearer(key, { headers: { host: "evil.example" } }),
    );
    const body = (await response.json()) as { thumbnail: { url: string } };
    expect(body.thumbnail.url.startsWith("https://api.example.com/")).toBe(true);
  });

  it("compares the operator token as digests: a right token of any length works, others do not", async () => {
    const { account } = await signUp();
    const vars = { ...production, ADMIN_TOKEN: longToken };
    const call = (token: string) =>
      apiWith(vars, `/v1/admin/accounts/${account.id}/approve`, {
        method: "POST",
        headers: { authorization: `Bearer ${token}` },
      });
    expect((await call(longToken)).status).toBe(200);
    for (const wrong of ["x", longToken.slice(0, -1), `${longToken}x`]) expect((await call(wrong)).status).toBe(401);
  });
});
