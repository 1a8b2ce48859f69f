import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { ROUTES } from "../../src/http/route";
import { MODES, type Mode } from "../../src/lib/tenant";
import { IMAGES } from "../fixtures/images";
import { api, bearer, errorCode, json, withCookie } from "../helpers";
import { apiWith } from "../support/app";
import { type Ran, recordingBindings, unboundStatements } from "../support/modes";
import { type ModeObjects, snapshot, type TwoModes, twoModes } from "./support";

/**
 * Test mode (docs/api-guide.md#test-mode-and-going-live): an API key sees only its own mode's
 * objects. Every operation a key may call, made with one mode's key on the other mode's object,
 * answers that resource's own not-found code, changes nothing of it, and runs only statements that
 * bind the key's mode.
 */

const other = (mode: Mode): Mode => (mode === "live" ? "test" : "live");

type Probe = { path: string; init?: RequestInit; code: string };

/** Each operation on one object by id, aimed at another mode's objects `o`. */
const BY_ID: Record<string, (o: ModeObjects) => Probe> = {
  getVideo: (o) => ({ path: `/v1/videos/${o.video}`, code: "video_not_found" }),
  updateVideo: (o) => ({
    path: `/v1/videos/${o.video}`,
    init: json("PATCH", { title: "intruder", visibility: "private" }),
    code: "video_not_found",
  }),
  deleteVideo: (o) => ({ path: `/v1/videos/${o.video}`, init: { method: "DELETE" }, code: "video_not_found" }),
  uploadPart: (o) => ({
    path: `/v1/videos/${o.video}/upload/parts/1`,
    init: { method: "PUT", body: "other part", headers: { "content-length": "10" } },
    code: "video_not_found",
  }),
  completeUpload: (o) => ({
    path: `/v1/videos/${o.video}/upload/complete`,
    init: json("POST", { parts: [{ partNumber: 1, etag: o.etag }] }),
    code: "video_not_found",
  }),
  createPlaybackToken: (o) => ({
    path: `/v1/videos/${o.video}/playback-tokens`,
    init: json("POST", {}),
    code: "video_not_found",
  }),
  setThumbnail: (o) => ({
    path: `/v1/videos/${o.video}/thumbnail`,
    init: { method: "PUT", headers: { "content-type": "image/png" }, body: IMAGES.rgbPng },
    code: "video_not_found",
  }),
  deleteThumbnail: (o) => ({
    path: `/v1/videos/${o.video}/thumbnail`,
    init: { method: "DELETE" },
    code: "video_not_found",
  }),
  getDirectUpload: (o) => ({ path: `/v1/uploads/${o.upload}`, code: "upload_not_found" }),
  putCaptionTrack: (o) => ({
    path: `/v1/videos/${o.video}/captions/en`,
    init: {
      method: "PUT",
      headers: { "content-type": "text/vtt" },
      body: "WEBVTT\n\n00:00:01.000 --> 00:00:02.000\nHi\n",
    },
    code: "video_not_found",
  }),
  listCaptionTracks: (o) => ({ path: `/v1/videos/${o.video}/captions`, code: "video_not_found" }),
  generateCaptionTrack: (o) => ({
    path: `/v1/videos/${o.video}/captions/en/generate`,
    init: { method: "POST" },
    code: "video_not_found",
  }),
  getVideoAnalytics: (o) => ({ path: `/v1/videos/${o.video}/analytics`, code: "video_not_found" }),
  putChapters: (o) => ({
    path: `/v1/videos/${o.video}/chapters`,
    init: json("PUT", { chapters: [{ start: 0, title: "intruder" }] }),
    code: "video_not_found",
  }),
  getChapters: (o) => ({ path: `/v1/videos/${o.video}/chapters`, code: "video_not_found" }),
  deleteChapters: (o) => ({
    path: `/v1/videos/${o.video}/chapters`,
    init: { method: "DELETE" },
    code: "video_not_found",
  }),
  putAudioTrack: (o) => ({
    path: `/v1/videos/${o.video}/audio-tracks/fr`,
    init: { method: "PUT", headers: { "content-type": "audio/mp4", "content-length": "12" }, body: "a French dub" },
    code: "video_not_found",
  }),
  listAudioTracks: (o) => ({ path: `/v1/videos/${o.video}/audio-tracks`, code: "video_not_found" }),
  deleteAudioTrack: (o) => ({
    path: `/v1/videos/${o.video}/audio-tracks/fr`,
    init: { method: "DELETE" },
    code: "video_not_found",
  }),
  deleteCaptionTrack: (o) => ({
    path: `/v1/videos/${o.video}/captions/en`,
    init: { method: "DELETE" },
    code: "video_not_found",
  }),
};

/** Each operation on one webhook endpoint by id, under `hooks` (the project's endpoints path). */
const ENDPOINT_BY_ID: Record<string, (hooks: string, o: ModeObjects) => Probe> = {
  getWebhookEndpoint: (hooks, o) => ({ path: `${hooks}/${o.endpoint}`, code: "endpoint_not_found" }),
  updateWebhookEndpoint: (hooks, o) => ({
    path: `${hooks}/${o.endpoint}`,
    init: json("PATCH", { description: "intruder", enabled: false }),
    code: "endpoint_not_found",
  }),
  deleteWebhookEndpoint: (hooks, o) => ({
    path: `${hooks}/${o.endpoint}`,
    init: { method: "DELETE" },
    code: "endpoint_not_found",
  }),
  rotateWebhookSecret: (hooks, o) => ({
    path: `${hooks}/${o.endpoint}/rotate-secret`,
    init: { method: "POST" },
    code: "endpoint_not_found",
  }),
  listWebhookDeliveries: (hooks, o) => ({ path: `${hooks}/${o.endpoint}/deliveries`, code: "endpoint_not_found" }),
  retryWebhookDelivery: (hooks, o) => ({
    path: `${hooks}/${o.endpoint}/deliveries/${o.attempt}/retry`,
    init: { method: "POST" },
    code: "endpoint_not_found",
  }),
};

/**
 * The operations that name no object: creates, lists and bulk, each tested below; the project's
 * analytics, counted per mode (test/analytics/consumer.test.ts).
 */
const NO_OBJECT = [
  "getProjectAnalytics",
  "createVideo",
  "listVideos",
  "bulkVideos",
  "createDirectUpload",
  "createWebhookEndpoint",
  "listWebhookEndpoints",
];

describe("the operations tested here", () => {
  it("are every operation an API key may call", () => {
    const keyOperations = ROUTES.filter((route) => (route.security ?? []).some((r) => "apiKey" in r)).map(
      (route) => route.operationId,
    );
    expect([...keyOperations].sort()).toEqual(
      [...Object.keys(BY_ID), ...Object.keys(ENDPOINT_BY_ID), ...NO_OBJECT].sort(),
    );
  });
});

/** A shared project with both modes' objects per file: each test checks that it changes none of them. */
let fixture: Promise<TwoModes> | undefined;
const both = () => {
  fixture ??= twoModes();
  return fixture;
};

/** Calls with `key`, recording its statements; fails the test if one does not bind `mode`. */
async function callAs(mode: Mode, key: string, path: string, init: RequestInit = {}): Promise<Response> {
  const { bindings, ran } = recordingBindings();
  const response = await apiWith(bindings, path, bearer(key, init));
  expect(unboundStatements(ran, mode), `${init.method ?? "GET"} ${path}`).toEqual([]);
  return response;
}

describe.each(MODES)("a %s key", (mode) => {
  const theirs = other(mode);

  it.each(Object.keys(BY_ID))(`%s on a ${theirs} video or upload answers its not-found code`, async (operation) => {
    const ws = await both();
    const probe = BY_ID[operation]?.(ws.objects[theirs]) as Probe;
    const before = await snapshot(ws.objects[theirs]);
    const response = await callAs(mode, ws.keys[mode], probe.path, probe.init);
    expect(response.status).toBe(404);
    expect(await errorCode(response)).toBe(probe.code);
    expect(await snapshot(ws.objects[theirs])).toEqual(before);
  });

  it.each(Object.keys(ENDPOINT_BY_ID))(`%s on a ${theirs} endpoint answers endpoint_not_found`, async (operation) => {
    const ws = await both();
    const probe = ENDPOINT_BY_ID[operation]?.(`/v1/projects/${ws.projectId}/webhook-endpoints`, ws.objects[theirs]);
    if (!probe) throw new Error(operation);
    const before = await snapshot(ws.objects[theirs]);
    const response = await callAs(mode, ws.keys[mode], probe.path, probe.init);
    expect(response.status).toBe(404);
    expect(await errorCode(response)).toBe(probe.code);
    expect(await snapshot(ws.objects[theirs])).toEqual(before);
  });

  it.each([
    ["delete", {}],
    ["set_visibility", { visibility: "private" }],
  ])(`bulk %s reports the ${theirs} videos video_not_found and does its own`, async (action, extra) => {
    const ws = await both();
    const mine = (await (await api("/v1/videos", bearer(ws.keys[mode], json("POST", {})))).json()) as {
      video: { id: string };
    };
    const before = await snapshot(ws.objects[theirs]);
    const response = await callAs(
      mode,
      ws.keys[mode],
      "/v1/videos/bulk",
      json("POST", { action, videoIds: [ws.objects[theirs].video, mine.video.id], ...extra }),
    );
    expect(response.status).toBe(200);
    const { results } = (await response.json()) as { results: { id: string; ok: boolean; error?: { code: string } }[] };
    expect(results.map((result) => (result.ok ? "ok" : result.error?.code))).toEqual(["video_not_found", "ok"]);
    expect(await snapshot(ws.objects[theirs])).toEqual(before);
  });

  it("lists its own mode's videos and endpoints only", async () => {
    const ws = await both();
    const videos = await callAs(mode, ws.keys[mode], "/v1/videos?limit=100");
    const page = (await videos.json()) as { data: { id: string; livemode: boolean }[] };
    expect(page.data.length).toBeGreaterThan(0);
    expect(page.data.every((video) => video.livemode === (mode === "live"))).toBe(true);
    const ids = page.data.map((video) => video.id);
    expect(ids).toContain(ws.objects[mode].video);
    expect(ids).not.toContain(ws.objects[theirs].video);
    expect(ids).not.toContain(ws.objects[theirs].uploadVideo);

    const hooks = await callAs(mode, ws.keys[mode], `/v1/projects/${ws.projectId}/webhook-endpoints`);
    const endpoints = ((await hooks.json()) as { data: { id: string; livemode: boolean }[] }).data;
    expect(endpoints.map((endpoint) => endpoint.id)).toContain(ws.objects[mode].endpoint);
    expect(endpoints.every((endpoint) => endpoint.livemode === (mode === "live"))).toBe(true);
  });

  it("creates videos, direct uploads and endpoints of its mode, which the other key cannot see", async () => {
    const ws = await both();
    const livemode = mode === "live";
    const created = await callAs(mode, ws.keys[mode], "/v1/videos", json("POST", {}));
    const { video } = (await created.json()) as { video: { id: string; livemode: boolean } };
    expect(video.livemode).toBe(livemode);
    const direct = await callAs(mode, ws.keys[mode], "/v1/uploads", json("POST", {}));
    const upload = (await direct.json()) as { id: string; livemode: boolean; video: { livemode: boolean } };
    expect([upload.livemode, upload.video.livemode]).toEqual([livemode, livemode]);
    const hooks = `/v1/projects/${ws.projectId}/webhook-endpoints`;
    const hook = await callAs(mode, ws.keys[mode], hooks, json("POST", { url: "https://hooks.example.com/new" }));
    const endpoint = (await hook.json()) as { id: string; livemode: boolean };
    expect(endpoint.livemode).toBe(livemode);

    const progress = await api(`/v1/uploads/${upload.id}`, bearer(ws.keys[mode]));
    expect(((await progress.json()) as { livemode: boolean }).livemode).toBe(livemode);
    const theirKey = ws.keys[theirs];
    expect(await errorCode(await api(`/v1/videos/${video.id}`, bearer(theirKey)))).toBe("video_not_found");
    expect(await errorCode(await api(`/v1/uploads/${upload.id}`, bearer(theirKey)))).toBe("upload_not_found");
    expect(await errorCode(await api(`${hooks}/${endpoint.id}`, bearer(theirKey)))).toBe("endpoint_not_found");
  });

  it("ignores ?mode= (a key acts in its own mode) but refuses one that is not live or test", async () => {
    const ws = await both();
    const read = await api(`/v1/videos/${ws.objects[mode].video}?mode=${theirs}`, bearer(ws.keys[mode]));
    expect(read.status).toBe(200);
    const created = await api(`/v1/videos?mode=${theirs}`, bearer(ws.keys[mode], json("POST", {})));
    expect(((await created.json()) as { video: { livemode: boolean } }).video.livemode).toBe(mode === "live");
    const bad = await api("/v1/videos?mode=sandbox", bearer(ws.keys[mode]));
    expect(bad.status).toBe(400);
    expect(await errorCode(bad)).toBe("invalid_query");
  });
});

describe("a session cookie", () => {
  const videosOf = async (ws: TwoModes, query: string) => {
    const response = await api(`/v1/videos?projectId=${ws.projectId}&limit=100${query}`, withCookie(ws.session));
    expect(response.status).toBe(200);
    return ((await response.json()) as { data: { id: string; livemode: boolean }[] }).data;
  };

  it("sees both modes' objects by id", async () => {
    const ws = await both();
    for (const mode of MODES) {
      const { video, upload, endpoint } = ws.objects[mode];
      const read = await api(`/v1/videos/${video}?projectId=${ws.projectId}`, withCookie(ws.session));
      expect(((await read.json()) as { livemode: boolean }).livemode).toBe(mode === "live");
      expect((await api(`/v1/uploads/${upload}?projectId=${ws.projectId}`, withCookie(ws.session))).status).toBe(200);
      const hook = await api(`/v1/projects/${ws.projectId}/webhook-endpoints/${endpoint}`, withCookie(ws.session));
      expect(((await hook.json()) as { livemode: boolean }).livemode).toBe(mode === "live");
    }
  });

  it("lists both modes, and narrows with ?mode=live or ?mode=test", async () => {
    const ws = await both();
    const all = await videosOf(ws, "");
    expect(new Set(all.map((video) => video.livemode))).toEqual(new Set([true, false]));
    for (const mode of MODES) {
      const narrowed = await videosOf(ws, `&mode=${mode}`);
      expect(narrowed.every((video) => video.livemode === (mode === "live"))).toBe(true);
      expect(narrowed.map((video) => video.id).sort()).toEqual(
        all
          .filter((video) => video.livemode === (mode === "live"))
          .map((video) => video.id)
          .sort(),
      );
      const hooks = await api(`/v1/projects/${ws.projectId}/webhook-endpoints?mode=${mode}`, withCookie(ws.session));
      const endpoints = ((await hooks.json()) as { data: { id: string; livemode: boolean }[] }).data;
      expect(endpoints.map((endpoint) => endpoint.id)).toContain(ws.objects[mode].endpoint);
      expect(endpoints.every((endpoint) => endpoint.livemode === (mode === "live"))).toBe(true);
    }
    const hooks = await api(`/v1/projects/${ws.projectId}/webhook-endpoints`, withCookie(ws.session));
    const endpoints = ((await hooks.json()) as { data: { id: string }[] }).data.map((endpoint) => endpoint.id);
    expect(endpoints).toEqual(expect.arrayContaining([ws.objects.live.endpoint, ws.objects.test.endpoint]));
  });

  it.each([
    ["an unknown mode", "&mode=sandbox"],
    ["an empty one", "&mode="],
    ["a repeated one", "&mode=live&mode=test"],
    ["another case", "&mode=LIVE"],
  ])("refuses %s with 400 invalid_query", async (_, query) => {
    const ws = await both();
    for (const path of [
      `/v1/videos?projectId=${ws.projectId}${query}`,
      `/v1/videos/${ws.objects.live.video}?projectId=${ws.projectId}${query}`,
      `/v1/projects/${ws.projectId}/webhook-endpoints?${query.slice(1)}`,
    ]) {
      const response = await api(path, withCookie(ws.session));
      expect(response.status, path).toBe(400);
      expect(await errorCode(response)).toBe("invalid_query");
    }
  });

  it("creates live objects, and test ones with ?mode=test", async () => {
    const ws = await both();
    for (const [query, livemode] of [
      ["", true],
      ["&mode=live", true],
      ["&mode=test", false],
    ] as const) {
      const video = await api(`/v1/videos?projectId=${ws.projectId}${query}`, withCookie(ws.session, json("POST", {})));
      expect(((await video.json()) as { video: { livemode: boolean } }).video.livemode).toBe(livemode);
      const upload = await api(
        `/v1/uploads?projectId=${ws.projectId}${query}`,
        withCookie(ws.session, json("POST", {})),
      );
      expect(((await upload.json()) as { livemode: boolean }).livemode).toBe(livemode);
      const hook = await api(
        `/v1/projects/${ws.projectId}/webhook-endpoints?${query.slice(1)}`,
        withCookie(ws.session, json("POST", { url: "https://hooks.example.com/cookie" })),
      );
      expect(((await hook.json()) as { livemode: boolean }).livemode).toBe(livemode);
    }
  });

  it("with ?mode= acts in that mode only: the other mode's objects are unknown, as to a key", async () => {
    const ws = await both();
    const read = await api(
      `/v1/videos/${ws.objects.live.video}?projectId=${ws.projectId}&mode=test`,
      withCookie(ws.session),
    );
    expect(await errorCode(read)).toBe("video_not_found");
    const hook = await api(
      `/v1/projects/${ws.projectId}/webhook-endpoints/${ws.objects.test.endpoint}?mode=live`,
      withCookie(ws.session),
    );
    expect(await errorCode(hook)).toBe("endpoint_not_found");
  });

  it("lists one mode with a seek on videos_project_mode_created, both with one on videos_project_created", async () => {
    const ws = await both();
    const plans = async (path: string) => {
      const { bindings, ran } = recordingBindings();
      const first = await apiWith(bindings, path, withCookie(ws.session));
      const { nextCursor } = (await first.json()) as { nextCursor: string };
      await apiWith(bindings, `${path}&cursor=${nextCursor}`, withCookie(ws.session));
      const lists = ran.filter((statement: Ran) => /^SELECT \* FROM videos WHERE project_id/.test(statement.sql));
      expect(lists).toHaveLength(2);
      return Promise.all(
        lists.map(async ({ sql, params }) => {
          const { results } = await env.DB.prepare(`EXPLAIN QUERY PLAN ${sql}`)
            .bind(...params)
            .all<{ detail: string }>();
          return results.map((row) => row.detail).join("\n");
        }),
      );
    };
    for (const mode of MODES) {
      for (const plan of await plans(`/v1/videos?projectId=${ws.projectId}&limit=1&mode=${mode}`)) {
        expect(plan).toMatch(/^SEARCH videos USING INDEX videos_project_mode_created \(project_id=\? AND livemode=\?/);
        expect(plan).not.toMatch(/TEMP B-TREE/);
      }
    }
    for (const plan of await plans(`/v1/videos?projectId=${ws.projectId}&limit=1`)) {
      expect(plan).toMatch(/^SEARCH videos USING INDEX videos_project_created \(project_id=\?/);
      expect(plan).not.toMatch(/TEMP B-TREE/);
    }
  });

  it("refuses a cursor of one mode's listing on another's", async () => {
    const ws = await both();
    const first = await api(`/v1/videos?projectId=${ws.projectId}&limit=1&mode=test`, withCookie(ws.session));
    const { nextCursor } = (await first.json()) as { nextCursor: string | null };
    expect(nextCursor).not.toBeNull();
    const next = `/v1/videos?projectId=${ws.projectId}&limit=1&cursor=${nextCursor}`;
    expect(await errorCode(await api(`${next}&mode=live`, withCookie(ws.session)))).toBe("invalid_cursor");
    expect(await errorCode(await api(next, withCookie(ws.session)))).toBe("invalid_cursor");
    expect((await api(`${next}&mode=test`, withCookie(ws.session))).status).toBe(200);
  });
});
