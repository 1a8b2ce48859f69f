import type { Job } from "../../media-plan/protocol.mjs";
import type { Mode } from "../../src/lib/tenant";
import {
  emptyPool,
  fakeEncoder,
  finishAll,
  jobsOf,
  lastJob,
  playable,
  probeFacts,
  putSegment,
  encoding as startEncoding,
} from "../encoding/pipeline/support";
import { IMAGES } from "../fixtures/images";
import { ADMIN, api, bearer, clientIp, json, newProject, newVideo, newWorkspace, signUp, withCookie } from "../helpers";
import type { BudgetedRoute } from "../round-trip-budget";
import { create, newUpload, TUS } from "../uploads/support";

/**
 * How to call each route of the API on its success path, given a fresh workspace: the calls the
 * round-trip budget counts (test/http/round-trips.test.ts), and whose statements test mode checks
 * (test/modes/statements.test.ts).
 */

/** The path of an absolute upload URL, for the app under test. */
const tusPath = (url: string) => new URL(url).pathname;

export type Workspace = Awaited<ReturnType<typeof workspace>>;
export type Call = { path: string; init?: RequestInit; status: number };

/**
 * A project with a key of `mode`, a video with an open upload, a webhook endpoint with an attempt
 * (all of that mode).
 */
export async function workspace(mode: Mode = "live") {
  const ws = await newWorkspace({ mode });
  const { video } = await newVideo(ws.key);
  const hooks = `/v1/projects/${ws.project.id}/webhook-endpoints`;
  const endpoint = (await (
    await api(hooks, bearer(ws.key, json("POST", { url: "https://hooks.example.com/b" })))
  ).json()) as {
    id: string;
  };
  const gone = (await newVideo(ws.key)).video.id;
  await api(`/v1/videos/${gone}`, bearer(ws.key, { method: "DELETE" }));
  const page = (await (await api(`${hooks}/${endpoint.id}/deliveries`, bearer(ws.key))).json()) as {
    data: { id: string }[];
  };
  // The key's lastUsedAt was written just now: requests within a minute do not write it again.
  return { ...ws, video: video.id, hooks, endpoint: endpoint.id, attempt: page.data[0]?.id ?? "" };
}

const png = IMAGES.rgbPng;
const VTT = "WEBVTT\n\n00:00:01.000 --> 00:00:02.000\nHello\n";
const CHAPTERS = [
  { start: 0, title: "Start" },
  { start: 2, title: "Middle" },
];
/** An audio track's file, as the routes see it (the fake encoder never reads it), with its length as HTTP sends it. */
const AUDIO = new TextEncoder().encode("a French dub");
const putAudio = (): RequestInit => ({
  method: "PUT",
  headers: { "content-type": "audio/mp4", "content-length": String(AUDIO.byteLength) },
  body: AUDIO,
});
const raw = (method: string, type: string, body: BodyInit): RequestInit => ({
  method,
  headers: { "content-type": type },
  body,
});

/** How to call each route on its success path, given a fresh workspace. */
export const CALLS: Record<BudgetedRoute, (ws: Workspace) => Promise<Call>> = {
  "POST /v1/auth/signup": async () => ({
    path: "/v1/auth/signup",
    init: json(
      "POST",
      { email: `rt-${crypto.randomUUID()}@example.com`, password: "a long password" },
      { "cf-connecting-ip": clientIp() },
    ),
    status: 201,
  }),
  "POST /v1/auth/login": async (ws) => ({
    path: "/v1/auth/login",
    init: json("POST", { email: ws.session.email, password: ws.session.password }, { "cf-connecting-ip": clientIp() }),
    status: 200,
  }),
  "POST /v1/auth/logout": async (ws) => ({
    path: "/v1/auth/logout",
    init: withCookie(ws.session, { method: "POST" }),
    status: 204,
  }),
  "GET /v1/account": async (ws) => ({ path: "/v1/account", init: withCookie(ws.session), status: 200 }),
  "POST /v1/account/password": async (ws) => ({
    path: "/v1/account/password",
    init: withCookie(
      ws.session,
      json("POST", { currentPassword: ws.session.password, newPassword: "another long password" }),
    ),
    status: 204,
  }),
  "GET /v1/admin/accounts": async () => ({
    path: "/v1/admin/accounts?approved=false&limit=5",
    init: { headers: ADMIN },
    status: 200,
  }),
  "POST /v1/admin/accounts/{accountId}/approve": async () => ({
    path: `/v1/admin/accounts/${(await signUp()).account.id}/approve`,
    init: { method: "POST", headers: ADMIN },
    status: 200,
  }),
  "POST /v1/admin/accounts/{accountId}/suspend": async () => ({
    path: `/v1/admin/accounts/${(await signUp()).account.id}/suspend`,
    init: { method: "POST", headers: ADMIN },
    status: 200,
  }),
  "PUT /v1/admin/accounts/{accountId}/plan": async () => ({
    path: `/v1/admin/accounts/${(await signUp()).account.id}/plan`,
    init: json("PUT", { plan: "pro" }, ADMIN),
    status: 200,
  }),
  "POST /v1/projects": async (ws) => ({
    path: "/v1/projects",
    init: withCookie(ws.session, json("POST", { name: "p" })),
    status: 201,
  }),
  "GET /v1/projects": async (ws) => ({ path: "/v1/projects", init: withCookie(ws.session), status: 200 }),
  "GET /v1/projects/{projectId}": async (ws) => ({
    path: `/v1/projects/${ws.project.id}`,
    init: withCookie(ws.session),
    status: 200,
  }),
  "DELETE /v1/projects/{projectId}": async (ws) => ({
    path: `/v1/projects/${(await newProject(ws.session)).id}`,
    init: withCookie(ws.session, { method: "DELETE" }),
    status: 204,
  }),
  "POST /v1/projects/{projectId}/api-keys": async (ws) => ({
    path: `/v1/projects/${ws.project.id}/api-keys`,
    init: withCookie(ws.session, json("POST", { name: "k", scopes: ["read"], mode: "test" })),
    status: 201,
  }),
  "GET /v1/projects/{projectId}/api-keys": async (ws) => ({
    path: `/v1/projects/${ws.project.id}/api-keys`,
    init: withCookie(ws.session),
    status: 200,
  }),
  "DELETE /v1/projects/{projectId}/api-keys/{keyId}": async (ws) => {
    const created = await api(
      `/v1/projects/${ws.project.id}/api-keys`,
      withCookie(ws.session, json("POST", { name: "k", scopes: ["read"], mode: "test" })),
    );
    const { id } = (await created.json()) as { id: string };
    return {
      path: `/v1/projects/${ws.project.id}/api-keys/${id}`,
      init: withCookie(ws.session, { method: "DELETE" }),
      status: 204,
    };
  },
  "GET /v1/projects/{projectId}/encoding-settings": async (ws) => ({
    path: `/v1/projects/${ws.project.id}/encoding-settings`,
    init: withCookie(ws.session),
    status: 200,
  }),
  "PATCH /v1/projects/{projectId}/encoding-settings": async (ws) => ({
    path: `/v1/projects/${ws.project.id}/encoding-settings`,
    init: withCookie(ws.session, json("PATCH", { mp4FallbackEnabled: true })),
    status: 200,
  }),
  "PUT /v1/projects/{projectId}/encoding-settings/watermark-image": async (ws) => ({
    path: `/v1/projects/${ws.project.id}/encoding-settings/watermark-image`,
    init: withCookie(ws.session, raw("PUT", "image/png", png)),
    status: 200,
  }),
  "DELETE /v1/projects/{projectId}/encoding-settings/watermark-image": async (ws) => {
    const path = `/v1/projects/${ws.project.id}/encoding-settings/watermark-image`;
    await api(path, withCookie(ws.session, raw("PUT", "image/png", png)));
    return { path, init: withCookie(ws.session, { method: "DELETE" }), status: 200 };
  },
  "POST /v1/videos/bulk set_visibility": async (ws) => ({
    path: "/v1/videos/bulk",
    init: bearer(ws.key, json("POST", { action: "set_visibility", videoIds: [ws.video], visibility: "private" })),
    status: 200,
  }),
  "POST /v1/videos/bulk delete": async (ws) => ({
    path: "/v1/videos/bulk",
    init: bearer(ws.key, json("POST", { action: "delete", videoIds: [(await newVideo(ws.key)).video.id] })),
    status: 200,
  }),
  "POST /v1/videos": async (ws) => ({ path: "/v1/videos", init: bearer(ws.key, json("POST", {})), status: 201 }),
  "POST /v1/uploads": async (ws) => ({ path: "/v1/uploads", init: bearer(ws.key, json("POST", {})), status: 201 }),
  "GET /v1/uploads/{id}": async (ws) => ({
    path: `/v1/uploads/${(await newUpload(ws.key)).id}`,
    init: bearer(ws.key),
    status: 200,
  }),
  "OPTIONS /tus/{token}": async (ws) => ({
    path: tusPath((await newUpload(ws.key)).url),
    init: { method: "OPTIONS" },
    status: 204,
  }),
  "POST /tus/{token}": async (ws) => ({
    path: tusPath((await newUpload(ws.key)).url),
    init: { method: "POST", headers: { ...TUS, "upload-length": "10" } },
    status: 201,
  }),
  "HEAD /tus/{token}/source": async (ws) => ({
    path: tusPath(await create((await newUpload(ws.key)).url, 10)),
    init: { method: "HEAD", headers: TUS },
    status: 200,
  }),
  "PATCH /tus/{token}/source": async (ws) => ({
    path: tusPath(await create((await newUpload(ws.key)).url, 20)),
    init: {
      method: "PATCH",
      headers: { ...TUS, "content-type": "application/offset+octet-stream", "upload-offset": "0" },
      body: "0123456789",
    },
    status: 204,
  }),
  "DELETE /tus/{token}/source": async (ws) => ({
    path: tusPath(await create((await newUpload(ws.key)).url, 10)),
    init: { method: "DELETE", headers: TUS },
    status: 204,
  }),
  "GET /v1/videos": async (ws) => ({ path: "/v1/videos", init: bearer(ws.key), status: 200 }),
  "GET /v1/videos/{id}": async (ws) => ({ path: `/v1/videos/${ws.video}`, init: bearer(ws.key), status: 200 }),
  "PATCH /v1/videos/{id}": async (ws) => ({
    path: `/v1/videos/${ws.video}`,
    init: bearer(ws.key, json("PATCH", { title: "Edited" })),
    status: 200,
  }),
  "DELETE /v1/videos/{id}": async (ws) => ({
    path: `/v1/videos/${(await newVideo(ws.key)).video.id}`,
    init: bearer(ws.key, { method: "DELETE" }),
    status: 204,
  }),
  "PUT /v1/videos/{id}/upload/parts/{partNumber}": async (ws) => ({
    path: `/v1/videos/${ws.video}/upload/parts/1`,
    init: bearer(ws.key, { method: "PUT", body: "part bytes", headers: { "content-length": "10" } }),
    status: 200,
  }),
  "POST /v1/videos/{id}/upload/complete": async (ws) => {
    const part = await api(
      `/v1/videos/${ws.video}/upload/parts/1`,
      bearer(ws.key, { method: "PUT", body: "part bytes", headers: { "content-length": "10" } }),
    );
    const { etag } = (await part.json()) as { etag: string };
    return {
      path: `/v1/videos/${ws.video}/upload/complete`,
      init: bearer(ws.key, json("POST", { parts: [{ partNumber: 1, etag }] })),
      status: 200,
    };
  },
  "PUT /v1/videos/{id}/thumbnail": async (ws) => ({
    path: `/v1/videos/${ws.video}/thumbnail`,
    init: bearer(ws.key, raw("PUT", "image/png", png)),
    status: 200,
  }),
  "DELETE /v1/videos/{id}/thumbnail": async (ws) => {
    await api(`/v1/videos/${ws.video}/thumbnail`, bearer(ws.key, raw("PUT", "image/png", png)));
    return { path: `/v1/videos/${ws.video}/thumbnail`, init: bearer(ws.key, { method: "DELETE" }), status: 200 };
  },
  "POST /v1/projects/{projectId}/webhook-endpoints": async (ws) => ({
    path: ws.hooks,
    init: bearer(ws.key, json("POST", { url: "https://hooks.example.com/x" })),
    status: 201,
  }),
  "GET /v1/projects/{projectId}/webhook-endpoints": async (ws) => ({
    path: ws.hooks,
    init: bearer(ws.key),
    status: 200,
  }),
  "GET /v1/projects/{projectId}/webhook-endpoints/{id}": async (ws) => ({
    path: `${ws.hooks}/${ws.endpoint}`,
    init: bearer(ws.key),
    status: 200,
  }),
  "PATCH /v1/projects/{projectId}/webhook-endpoints/{id}": async (ws) => ({
    path: `${ws.hooks}/${ws.endpoint}`,
    init: bearer(ws.key, json("PATCH", { description: "d" })),
    status: 200,
  }),
  "DELETE /v1/projects/{projectId}/webhook-endpoints/{id}": async (ws) => ({
    path: `${ws.hooks}/${ws.endpoint}`,
    init: bearer(ws.key, { method: "DELETE" }),
    status: 204,
  }),
  "POST /v1/projects/{projectId}/webhook-endpoints/{id}/rotate-secret": async (ws) => ({
    path: `${ws.hooks}/${ws.endpoint}/rotate-secret`,
    init: bearer(ws.key, { method: "POST" }),
    status: 200,
  }),
  "GET /v1/projects/{projectId}/webhook-endpoints/{id}/deliveries": async (ws) => ({
    path: `${ws.hooks}/${ws.endpoint}/deliveries?limit=100`,
    init: bearer(ws.key),
    status: 200,
  }),
  "POST /v1/projects/{projectId}/webhook-endpoints/{id}/deliveries/{attemptId}/retry": async (ws) => ({
    path: `${ws.hooks}/${ws.endpoint}/deliveries/${ws.attempt}/retry`,
    init: bearer(ws.key, { method: "POST" }),
    status: 202,
  }),
  "PUT /v1/videos/{id}/captions/{language}": async (ws) => ({
    path: `/v1/videos/${ws.video}/captions/pt-BR`,
    init: bearer(ws.key, raw("PUT", "text/vtt", VTT)),
    status: 200,
  }),
  "GET /v1/videos/{id}/captions": async (ws) => {
    await api(`/v1/videos/${ws.video}/captions/en`, bearer(ws.key, raw("PUT", "text/vtt", VTT)));
    return { path: `/v1/videos/${ws.video}/captions`, init: bearer(ws.key), status: 200 };
  },
  "POST /v1/videos/{id}/captions/{language}/generate": async (ws) => ({
    // A ready video: its coordinator holds no slot the later calls' videos need.
    path: `/v1/videos/${await ready(ws)}/captions/en/generate`,
    init: bearer(ws.key, { method: "POST" }),
    status: 202,
  }),
  "DELETE /v1/videos/{id}/captions/{language}": async (ws) => {
    await api(`/v1/videos/${ws.video}/captions/en`, bearer(ws.key, raw("PUT", "text/vtt", VTT)));
    return { path: `/v1/videos/${ws.video}/captions/en`, init: bearer(ws.key, { method: "DELETE" }), status: 204 };
  },
  "PUT /v1/videos/{id}/chapters": async (ws) => ({
    path: `/v1/videos/${ws.video}/chapters`,
    init: bearer(ws.key, json("PUT", { chapters: CHAPTERS })),
    status: 200,
  }),
  "GET /v1/videos/{id}/chapters": async (ws) => {
    await api(`/v1/videos/${ws.video}/chapters`, bearer(ws.key, json("PUT", { chapters: CHAPTERS })));
    return { path: `/v1/videos/${ws.video}/chapters`, init: bearer(ws.key), status: 200 };
  },
  "DELETE /v1/videos/{id}/chapters": async (ws) => {
    await api(`/v1/videos/${ws.video}/chapters`, bearer(ws.key, json("PUT", { chapters: CHAPTERS })));
    return { path: `/v1/videos/${ws.video}/chapters`, init: bearer(ws.key, { method: "DELETE" }), status: 204 };
  },
  "PUT /v1/videos/{id}/audio-tracks/{language}": async (ws) => ({
    path: `/v1/videos/${await ready(ws)}/audio-tracks/fr`,
    init: bearer(ws.key, putAudio()),
    status: 202,
  }),
  "GET /v1/videos/{id}/audio-tracks": async (ws) => {
    const id = await ready(ws);
    await api(`/v1/videos/${id}/audio-tracks/fr`, bearer(ws.key, putAudio()));
    return { path: `/v1/videos/${id}/audio-tracks`, init: bearer(ws.key), status: 200 };
  },
  "DELETE /v1/videos/{id}/audio-tracks/{language}": async (ws) => {
    const id = await ready(ws);
    await api(`/v1/videos/${id}/audio-tracks/fr`, bearer(ws.key, putAudio()));
    return { path: `/v1/videos/${id}/audio-tracks/fr`, init: bearer(ws.key, { method: "DELETE" }), status: 204 };
  },
  "GET /thumbnails/{projectId}/{videoId}/{file}": async (ws) => {
    const put = await api(`/v1/videos/${ws.video}/thumbnail`, bearer(ws.key, raw("PUT", "image/png", png)));
    const { thumbnailUrl } = (await put.json()) as { thumbnailUrl: string };
    return { path: new URL(thumbnailUrl).pathname, status: 200 };
  },
  "POST /v1/videos/{id}/playback-tokens": async (ws) => ({
    path: `/v1/videos/${ws.video}/playback-tokens`,
    init: bearer(ws.key, json("POST", { expiresIn: 600 })),
    status: 201,
  }),
  "POST /play/{id}/beacons": async (ws) => ({
    path: `/play/${await ready(ws)}/beacons`,
    init: json(
      "POST",
      {
        viewId: "round-trip-view-0001",
        event: "start",
        playheadSeconds: 0,
        watchedMs: 0,
        rebufferCount: 0,
        rebufferMs: 0,
      },
      { "cf-connecting-ip": clientIp() },
    ),
    status: 204,
  }),
  "GET /v1/videos/{id}/analytics": async (ws) => ({
    path: `/v1/videos/${ws.video}/analytics`,
    init: bearer(ws.key),
    status: 200,
  }),
  "GET /v1/analytics": async (ws) => ({ path: "/v1/analytics?interval=hour", init: bearer(ws.key), status: 200 }),
  "GET /play/{id}/master.m3u8": async (ws) => ({ path: `/play/${await ready(ws)}/master.m3u8`, status: 200 }),
  "GET /play/{id}/{rendition}/index.m3u8": async (ws) => ({
    path: `/play/${await ready(ws)}/360p/index.m3u8`,
    status: 200,
  }),
  "GET /play/{id}/{rendition}/{segment}": async (ws) => ({
    path: `/play/${await ready(ws)}/360p/seg_00000.ts`,
    status: 200,
  }),
  "GET /play/{id}/{rendition}/{segment} on demand": async (ws) => {
    const encoder = fakeEncoder();
    await emptyPool();
    const { id } = await playable(encoder, ws.key, probeFacts(600));
    // The viewer's segment is stored while the request waits for it.
    void (async () => {
      for (let i = 0; i < 200; i++) {
        const live = jobsOf(encoder, id, "segments").find(
          (job) => job.priority === "interactive" && job.kind === "segments" && job.from === 100,
        );
        if (live) {
          await putSegment(live, "360p", 100);
          return;
        }
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
    })();
    return { path: `/play/${id}/360p/seg_00100.ts`, status: 200 };
  },
  "GET /play/{id}/video.mp4 range": async (ws) => ({
    path: `/play/${await ready(ws)}/video.mp4`,
    init: { headers: { range: "bytes=1-2" } },
    status: 206,
  }),
  "GET /play/{token}/master.m3u8": async (ws) => {
    const id = await ready(ws);
    const minted = await api(`/v1/videos/${id}/playback-tokens`, bearer(ws.key, json("POST", {})));
    return { path: `/play/${((await minted.json()) as { token: string }).token}/master.m3u8`, status: 200 };
  },
  "GET /embed/{id}": async (ws) => ({ path: `/embed/${await ready(ws)}`, status: 200 }),
  "GET /play/{id}/master.m3u8 with captions": async (ws) => ({
    path: `/play/${await readyWithCaptions(ws)}/master.m3u8`,
    status: 200,
  }),
  "GET /play/{id}/captions/{language}.vtt": async (ws) => ({
    path: `/play/${await readyWithCaptions(ws)}/captions/en.vtt`,
    status: 200,
  }),
  "GET /play/{id}/captions/{language}.m3u8": async (ws) => ({
    path: `/play/${await readyWithCaptions(ws)}/captions/en.m3u8`,
    status: 200,
  }),
  "GET /embed/{id} with captions": async (ws) => ({ path: `/embed/${await readyWithCaptions(ws)}`, status: 200 }),
  "GET /play/{id}/chapters.vtt": async (ws) => {
    const id = await ready(ws);
    await api(`/v1/videos/${id}/chapters`, bearer(ws.key, json("PUT", { chapters: CHAPTERS })));
    return { path: `/play/${id}/chapters.vtt`, status: 200 };
  },
  "GET /internal/encoding/{project}/{id}/{job}/source range": async (ws) => {
    const job = await encoding(ws);
    const init = callbackInit(job, { headers: { range: "bytes=0-3" } });
    return { path: callbackPath(job, "source"), init, status: 206 };
  },
  "PUT /internal/encoding/{project}/{id}/{job}/segments/{rendition}/{segment}": async (ws) => {
    const encoder = fakeEncoder();
    await emptyPool();
    const { id } = await playable(encoder, ws.key, probeFacts(8));
    const job = lastJob(encoder, id, "segments");
    const init = callbackInit(job, {
      method: "PUT",
      headers: { "content-type": "video/mp2t", "content-length": "13" },
      body: "segment bytes",
    });
    return { path: callbackPath(job, "segments/360p/seg_00000.ts"), init, status: 204 };
  },
  "POST /internal/encoding/{project}/{id}/{job}/heartbeat": async (ws) => {
    const job = await encoding(ws);
    const beat = { version: 2, jobId: job.jobId, progress: 0.1 };
    return { path: callbackPath(job, "heartbeat"), init: callbackInit(job, json("POST", beat)), status: 204 };
  },
};

/** A video of the workspace whose probe job runs on a fake encoder. */
async function encoding(ws: Workspace): Promise<Job> {
  const encoder = fakeEncoder();
  await emptyPool();
  return (await startEncoding(encoder, ws.key)).probe;
}

/** A ready video of the workspace, with an MP4 (settings: 360p and the MP4); its id. */
async function ready(ws: Workspace): Promise<string> {
  const encoder = fakeEncoder();
  await emptyPool();
  await api(
    `/v1/projects/${ws.project.id}/encoding-settings`,
    withCookie(ws.session, json("PATCH", { enabledResolutions: ["360p"], mp4FallbackEnabled: true })),
  );
  const { id } = await playable(encoder, ws.key, probeFacts(6));
  await finishAll(encoder, id);
  return id;
}

/** A ready video of the workspace with two caption tracks; its id. */
async function readyWithCaptions(ws: Workspace): Promise<string> {
  const id = await ready(ws);
  for (const language of ["en", "fr"]) {
    await api(`/v1/videos/${id}/captions/${language}`, bearer(ws.key, raw("PUT", "text/vtt", VTT)));
  }
  return id;
}

const callbackPath = (job: Job, path: string) => `${new URL(job.callback.baseUrl).pathname}/${path}`;
const callbackInit = (job: Job, init: RequestInit = {}): RequestInit => ({
  ...init,
  headers: { ...(init.headers as Record<string, string>), authorization: `Bearer ${job.callback.token}` },
});
