import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import { SECRETS } from "../../src/lib/secrets";
import { emptyPool, encoding, fakeEncoder } from "../encoding/pipeline/support";
import { api, bearer, errorCode, json, newVideo, newWorkspace } from "../helpers";
import { apiWith } from "../support/app";
import { newUpload, TUS } from "../uploads/support";

/**
 * One secret per purpose (docs/conventions.md#one-secret-per-purpose; issue 25, item 9): each
 * rotatable without downtime. The Worker is called with some secrets replaced (`apiWith`), as after
 * a `wrangler secret put`.
 */
type SecretName = (typeof SECRETS)[keyof typeof SECRETS];
const NEW = "a-new-value-of-at-least-32-characters-0123";
const current = (name: SecretName) => env[name] as string;
/** Bindings as after `name` was rotated to a new value; `keepPrevious` keeps the old one accepted. */
function rotated(name: SecretName, keepPrevious: boolean): Partial<Env> {
  return { [name]: NEW, ...(keepPrevious ? { [`${name}_PREVIOUS`]: current(name) } : {}) } as Partial<Env>;
}

/** Something signed (or sealed) with each secret, and how the Worker answers it under `bindings`. */
async function signedThings() {
  const encoder = fakeEncoder();
  const { key } = await newWorkspace();
  await newVideo(key);
  await newVideo(key);
  const page = (await (await api("/v1/videos?limit=1", bearer(key))).json()) as { nextCursor: string };
  await emptyPool();
  const video = await encoding(encoder, key);
  const minted = await api(`/v1/videos/${video.id}/playback-tokens`, bearer(key, json("POST", {})));
  const { token } = (await minted.json()) as { token: string };
  const upload = await newUpload(key);
  const idempotent = json("POST", { title: "once" }, { "idempotency-key": crypto.randomUUID() });
  expect((await api("/v1/videos", bearer(key, idempotent))).status).toBe(201);
  const job = video.probe;
  const callbackBase = new URL(job.callback.baseUrl).pathname;
  return {
    CURSOR_SECRET: async (bindings: Partial<Env>) =>
      (await apiWith(bindings, `/v1/videos?limit=1&cursor=${page.nextCursor}`, bearer(key))).status === 200,
    PLAYBACK_SECRET: async (bindings: Partial<Env>) => {
      // The token verifies before the video is read: a 404 (not ready) says it was accepted.
      const response = await apiWith(bindings, `/play/${token}/master.m3u8`);
      return response.status !== 403;
    },
    // OPTIONS on an upload URL is 204 when the URL verifies, a tus 404 when it does not.
    UPLOAD_URL_SECRET: async (bindings: Partial<Env>) =>
      (await apiWith(bindings, new URL(upload.url).pathname, { method: "OPTIONS", headers: TUS })).status === 204,
    IDEMPOTENCY_SECRET: async (bindings: Partial<Env>) => {
      const response = await apiWith(bindings, "/v1/videos", bearer(key, idempotent)).catch(() => null);
      return response?.status === 201 && response.headers.get("idempotent-replayed") === "true";
    },
    ENCODER_CALLBACK_SECRET: async (bindings: Partial<Env>) => {
      const heartbeat = { method: "POST", headers: { authorization: `Bearer ${job.callback.token}` } };
      return (await apiWith(bindings, `${callbackBase}/heartbeat`, heartbeat)).status !== 401;
    },
  } satisfies Record<SecretName, (bindings: Partial<Env>) => Promise<boolean>>;
}

describe("one secret per purpose, each rotatable without downtime", () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

  it("accepts what each secret signed until it changes, and only that secret's change voids it", async () => {
    const things = await signedThings();
    const names = Object.values(SECRETS);
    for (const name of names) {
      expect(await things[name]({}), `${name}, unchanged`).toBe(true);
      for (const other of names.filter((candidate) => candidate !== name)) {
        // Rotating another secret (without keeping its old value) leaves this one's work valid.
        expect(await things[name](rotated(other, false)), `${name} after ${other} changed`).toBe(true);
      }
      vi.spyOn(console, "error").mockImplementation(() => {});
      expect(await things[name](rotated(name, false)), `${name} after it changed`).toBe(false);
      vi.restoreAllMocks();
    }
  });

  it("accepts the previous value of each secret while <NAME>_PREVIOUS is set", async () => {
    const things = await signedThings();
    for (const name of Object.values(SECRETS)) {
      expect(await things[name](rotated(name, true)), `${name} with its previous value kept`).toBe(true);
    }
  });

  it("signs anew with the new value during a rotation", async () => {
    const { key } = await newWorkspace();
    await newVideo(key);
    await newVideo(key);
    const bindings = rotated("CURSOR_SECRET", true);
    const page = (await (await apiWith(bindings, "/v1/videos?limit=1", bearer(key))).json()) as { nextCursor: string };
    // Made with the new value: the new value alone accepts it, the old alone does not.
    const next = `/v1/videos?limit=1&cursor=${page.nextCursor}`;
    expect((await apiWith({ CURSOR_SECRET: NEW } as Partial<Env>, next, bearer(key))).status).toBe(200);
    expect(await errorCode(await api(next, bearer(key)))).toBe("invalid_cursor");
  });
});
