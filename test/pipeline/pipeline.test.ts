import { env } from "cloudflare:workers";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { encodePrefix, posterKey, videoPrefix } from "../../src/lib/storage-keys";
import { endWith, MAX_ATTEMPTS, SILENCE_MS } from "../../src/pipeline/attempts";
import { sweepEncodings } from "../../src/pipeline/sweeper";
import type { VideoRow } from "../../src/videos/model";
import { IMAGES } from "../fixtures/images";
import { api, bearer, errorCode, json, newWorkspace, withCookie } from "../helpers";
import {
  callback,
  deps,
  encodeMessages,
  failWith,
  fakeEncoder,
  finishReady,
  MASTER,
  putOutput,
  runEncodes,
  uploadedVideo,
} from "./support";

type Video = {
  id: string;
  projectId: string;
  status: string;
  duration: number | null;
  width: number | null;
  height: number | null;
  renditions: { resolution: string; width: number; height: number }[];
  playback: { hls: string; mp4: string | null } | null;
  error: { code: string; message: string } | null;
  thumbnail: { source: string; url: string };
};

let encoder: ReturnType<typeof fakeEncoder>;
beforeEach(() => {
  encoder = fakeEncoder();
});
afterEach(() => {
  vi.restoreAllMocks();
});

async function video(key: string, id: string): Promise<Video> {
  return (await (await api(`/v1/videos/${id}`, bearer(key))).json()) as Video;
}

async function outboxEvents(videoId: string) {
  const { results } = await env.DB.prepare("SELECT type, payload FROM outbox_events WHERE subject_id = ? ORDER BY type")
    .bind(videoId)
    .all<{ type: string; payload: string }>();
  return results.map((row) => ({ type: row.type, payload: JSON.parse(row.payload) }));
}

async function keysUnder(prefix: string): Promise<string[]> {
  return (await env.MEDIA.list({ prefix })).objects.map((object) => object.key);
}

/** An uploaded video whose first attempt has started on the fake encoder. */
async function encoding(key: string, bytes?: Uint8Array) {
  const created = await uploadedVideo(key, bytes);
  const messages = encodeMessages().filter((message) => message.videoId === created.id);
  expect(messages).toHaveLength(1);
  await runEncodes(messages);
  const job = encoder.jobs.find((candidate) => candidate.jobId === created.id);
  if (!job) throw new Error("no job started");
  return { id: created.id, job };
}

describe("the encoding pipeline", () => {
  it("completing an upload queues the video, and its first attempt starts with the project's settings", async () => {
    const { key, project } = await newWorkspace();
    const { id, job } = await encoding(key);
    expect(job).toMatchObject({
      version: 1,
      jobId: id,
      attempt: 1,
      callback: { baseUrl: `http://api.test/internal/encoding/${id}/1` },
      settings: { enabledResolutions: ["360p", "720p", "1080p"], mp4: false, watermark: null },
    });
    expect((await video(key, id)).status).toBe("processing");
    expect(encodeMessages()).toEqual([{ projectId: project.id, videoId: id }]);
  });

  it("the encoder reads the source with its token; a wrong token is 401", async () => {
    const { key } = await newWorkspace();
    const bytes = new TextEncoder().encode("the uploaded source");
    const { job } = await encoding(key, bytes);
    const source = await callback(job, "source");
    expect(source.status).toBe(200);
    expect(new Uint8Array(await source.arrayBuffer())).toEqual(bytes);
    expect((await callback(job, "source", {}, "x".repeat(43))).status).toBe(401);
    const otherAttempt = await api(`/internal/encoding/${job.jobId}/2/source`, {
      headers: { authorization: `Bearer ${job.callback.token}` },
    });
    expect(otherAttempt.status).toBe(401);
  });

  it("a ready result makes the video ready, playable, with its poster and one video.ready event", async () => {
    const { key, project } = await newWorkspace();
    const { id, job } = await encoding(key);
    expect((await callback(job, "heartbeat", json("POST", heartbeat(job)))).status).toBe(204);
    expect((await finishReady(job)).status).toBe(204);
    const ready = await video(key, id);
    expect(ready).toMatchObject({
      status: "ready",
      duration: 3.02,
      width: 640,
      height: 360,
      renditions: [{ resolution: "360p", width: 640, height: 360 }],
      playback: { hls: `http://api.test/play/${id}/master.m3u8`, mp4: null },
      error: null,
    });
    const master = await api(`/play/${id}/master.m3u8`);
    expect(master.status).toBe(200);
    expect(await master.text()).toBe(MASTER);
    expect(master.headers.get("access-control-allow-origin")).toBe("*");
    const poster = await api(new URL(ready.thumbnail.url).pathname);
    expect(poster.status).toBe(200);
    expect(poster.headers.get("content-type")).toBe("image/jpeg");
    const events = await outboxEvents(id);
    expect(events.map((event) => event.type)).toEqual(["video.ready"]);
    expect(events[0]?.payload.data).toEqual(ready);
    // Anything more about the attempt is about an attempt that is over.
    expect((await failWith(job, "encoding_failed")).status).toBe(410);
    expect(await outboxEvents(id)).toHaveLength(1);
    expect(await keysUnder(encodePrefix(project.id, id, 1))).toContain(`${encodePrefix(project.id, id, 1)}master.m3u8`);
  });

  it("a source that is not a video is errored at once with invalid_source and one video.errored", async () => {
    const { key } = await newWorkspace();
    const { id, job } = await encoding(key);
    await putOutput(job, "360p/seg_00000.ts", "partial", "video/mp2t");
    expect((await failWith(job, "invalid_source", "The source is not a decodable video.")).status).toBe(204);
    const errored = await video(key, id);
    expect(errored).toMatchObject({
      status: "errored",
      error: { code: "invalid_source", message: "The source is not a decodable video." },
      renditions: [],
      playback: null,
    });
    expect((await outboxEvents(id)).map((event) => event.type)).toEqual(["video.errored"]);
    expect(encoder.jobs).toHaveLength(1);
    expect(await keysUnder(`${videoPrefix(errored.projectId, id)}encodes/`)).toEqual([]);
  });

  it(`retries a failed attempt, ${MAX_ATTEMPTS} in all, then errors with encoding_failed`, async () => {
    const { key } = await newWorkspace();
    const { id, job } = await encoding(key);
    let current = job;
    for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
      expect(current.attempt).toBe(attempt);
      expect((await failWith(current, "encoding_failed")).status).toBe(204);
      if (attempt === MAX_ATTEMPTS) break;
      expect((await video(key, id)).status).toBe("uploaded");
      await runEncodes(encodeMessages().slice(-1));
      current = encoder.jobs.at(-1) as typeof job;
    }
    const errored = await video(key, id);
    expect(errored.status).toBe("errored");
    expect(errored.error?.code).toBe("encoding_failed");
    expect((await outboxEvents(id)).map((event) => event.type)).toEqual(["video.errored"]);
    expect(encoder.jobs.map((started) => started.attempt)).toEqual([1, 2, 3]);
  });

  it("keeps the settings of the first attempt for every retry", async () => {
    const { key, session, project } = await newWorkspace();
    const { job } = await encoding(key);
    const patched = await api(
      `/v1/projects/${project.id}/encoding-settings`,
      withCookie(session, json("PATCH", { enabledResolutions: ["240p"], mp4FallbackEnabled: true })),
    );
    expect(patched.status).toBe(200);
    await failWith(job, "encoding_failed");
    await runEncodes(encodeMessages().slice(-1));
    expect(encoder.jobs.at(-1)?.settings).toEqual(job.settings);
  });

  it("a busy encoder leaves the video uploaded and the message retried later, the attempt uncounted", async () => {
    const { key } = await newWorkspace();
    const created = await uploadedVideo(key);
    encoder.busy = true;
    const result = await runEncodes(encodeMessages());
    expect(result.retryMessages.map((message) => message.msgId)).toEqual(["m0"]);
    expect((await video(key, created.id)).status).toBe("uploaded");
    encoder.busy = false;
    await runEncodes(encodeMessages());
    expect(encoder.jobs.map((job) => job.attempt)).toEqual([1]);
  });

  it("an encoder that refuses the job gives the claim back; one that never answers keeps it", async () => {
    const { key } = await newWorkspace();
    const refused = await uploadedVideo(key);
    vi.mocked(globalThis.fetch).mockResolvedValueOnce(
      Response.json({ error: { code: "invalid_job" } }, { status: 400 }),
    );
    const result = await runEncodes(encodeMessages().filter((message) => message.videoId === refused.id));
    expect(result.retryMessages.map((message) => message.msgId)).toEqual(["m0"]);
    expect(await video(key, refused.id)).toMatchObject({ status: "uploaded" });
    const silent = await uploadedVideo(key);
    vi.mocked(globalThis.fetch).mockRejectedValueOnce(new Error("network lost"));
    await runEncodes(encodeMessages().filter((message) => message.videoId === silent.id));
    // It may have taken the job: the attempt stands, and its silence will end it.
    expect(await video(key, silent.id)).toMatchObject({ status: "processing" });
  });

  it("a late heartbeat that beats the takeover keeps the attempt and its outputs", async () => {
    const { key, project } = await newWorkspace();
    const { id, job } = await encoding(key);
    await putOutput(job, "360p/seg_00000.ts", "segment", "video/mp2t");
    const now = Date.now();
    const row = await env.DB.prepare("SELECT * FROM videos WHERE id = ?").bind(id).first<VideoRow>();
    // The sweep read the row as silent; the heartbeat lands before its takeover does.
    expect((await callback(job, "heartbeat", json("POST", heartbeat(job)))).status).toBe(204);
    const ended = await endWith(
      deps(),
      row as VideoRow,
      { status: "failed", code: "encoding_failed", message: "The encoder stopped reporting." },
      { silentSince: new Date(now - 1).toISOString() },
    );
    expect(ended).toBeNull();
    expect(encoder.cancelled).not.toContain(id);
    expect(await keysUnder(encodePrefix(project.id, id, 1))).toEqual([
      `${encodePrefix(project.id, id, 1)}360p/seg_00000.ts`,
    ]);
    expect((await finishReady(job)).status).toBe(204);
    expect((await video(key, id)).status).toBe("ready");
  });

  it("a second copy of a ready result leaves the served outputs alone", async () => {
    const { key, project } = await newWorkspace();
    const { id, job } = await encoding(key);
    const row = await env.DB.prepare("SELECT * FROM videos WHERE id = ?").bind(id).first<VideoRow>();
    expect((await finishReady(job)).status).toBe(204);
    const ready = { status: "ready" as const, duration: 3, width: 640, height: 360, renditions: [], mp4: false };
    expect(await endWith(deps(), row as VideoRow, { status: "ready", outcome: ready })).toBeNull();
    expect(await keysUnder(encodePrefix(project.id, id, 1))).toContain(`${encodePrefix(project.id, id, 1)}master.m3u8`);
    expect((await api(`/play/${id}/master.m3u8`)).status).toBe(200);
    expect((await api(new URL((await video(key, id)).thumbnail.url).pathname)).status).toBe(200);
  });

  it("a duplicate message starts nothing more", async () => {
    const { key } = await newWorkspace();
    const { job } = await encoding(key);
    await runEncodes(encodeMessages());
    expect(encoder.jobs).toEqual([job]);
  });

  it("takes over an attempt whose encoder went silent, and sends again a video whose message was lost", async () => {
    const { key } = await newWorkspace();
    const { id, job } = await encoding(key);
    const lost = await uploadedVideo(key);
    const later = Date.now() + SILENCE_MS + 2 * 60_000 + 1000;
    // (Earlier tests of this file left videos processing or uploaded too: they are swept alike.)
    const swept = await sweepEncodings(deps(), later);
    expect(swept.takenOver).toBeGreaterThanOrEqual(1);
    expect(swept.resent).toBeGreaterThanOrEqual(1);
    expect(encoder.cancelled).toContain(id);
    expect((await video(key, id)).status).toBe("uploaded");
    // The silent attempt is void: its calls are answered 410, which stops its encoder.
    expect((await callback(job, "heartbeat", json("POST", heartbeat(job)))).status).toBe(410);
    expect((await putOutput(job, "master.m3u8", MASTER, "application/vnd.apple.mpegurl")).status).toBe(410);
    const sent = encodeMessages().map((message) => message.videoId);
    expect(sent.filter((videoId) => videoId === id)).toHaveLength(2);
    expect(sent.filter((videoId) => videoId === lost.id)).toHaveLength(2);
    await runEncodes(
      encodeMessages()
        .filter((message) => message.videoId === id)
        .slice(-1),
    );
    const second = encoder.jobs.find((started) => started.jobId === id && started.attempt === 2);
    expect(second).toBeDefined();
    expect((await finishReady(second as typeof job)).status).toBe(204);
    expect((await video(key, id)).status).toBe("ready");
  });

  it("a heartbeat keeps an attempt from being taken over", async () => {
    const { key } = await newWorkspace();
    const { id, job } = await encoding(key);
    const now = Date.now();
    vi.spyOn(Date, "now").mockReturnValue(now + SILENCE_MS - 1000);
    expect((await callback(job, "heartbeat", json("POST", heartbeat(job)))).status).toBe(204);
    vi.mocked(Date.now).mockRestore();
    await sweepEncodings(deps(), now + SILENCE_MS + 1000);
    expect((await video(key, id)).status).toBe("processing");
    expect(encoder.cancelled).not.toContain(id);
  });

  it("deleting a video while it is processing cancels its encoding, leaves nothing in R2 and no video.ready", async () => {
    const { key, project } = await newWorkspace();
    const { id, job } = await encoding(key);
    await putOutput(job, "360p/seg_00000.ts", "segment", "video/mp2t");
    expect((await api(`/v1/videos/${id}`, bearer(key, { method: "DELETE" }))).status).toBe(204);
    expect(encoder.cancelled).toContain(id);
    // A file still on its way when the video was deleted is removed as it arrives.
    expect((await putOutput(job, "360p/seg_00001.ts", "segment", "video/mp2t")).status).toBe(410);
    expect((await failWith(job, "encoding_failed")).status).toBe(410);
    expect(await keysUnder(videoPrefix(project.id, id))).toEqual([]);
    expect((await outboxEvents(id)).map((event) => event.type)).toEqual(["video.deleted"]);
  });

  it("deleting a ready video removes every output, and its playback URLs answer 404 at once", async () => {
    const { key, project } = await newWorkspace();
    const { id, job } = await encoding(key);
    await finishReady(job);
    expect((await api(`/play/${id}/master.m3u8`)).status).toBe(200);
    await api(`/v1/videos/${id}`, bearer(key, { method: "DELETE" }));
    const gone = await api(`/play/${id}/master.m3u8`);
    expect(gone.status).toBe(404);
    expect(await errorCode(gone)).toBe("not_found");
    expect(await keysUnder(videoPrefix(project.id, id))).toEqual([]);
    expect(await env.MEDIA.head(posterKey(project.id, id))).toBeNull();
  });

  it("a custom thumbnail stays the video's thumbnail through encoding", async () => {
    const { key } = await newWorkspace();
    const { id, job } = await encoding(key);
    const png = IMAGES.rgbPng;
    const put = await api(
      `/v1/videos/${id}/thumbnail`,
      bearer(key, { method: "PUT", body: png, headers: { "content-type": "image/png" } }),
    );
    expect(put.status).toBe(200);
    await finishReady(job);
    expect((await video(key, id)).thumbnail.source).toBe("custom");
  });

  it("refuses a malformed protocol message with invalid_body, never a 500", async () => {
    const { key } = await newWorkspace();
    const { job } = await encoding(key);
    for (const body of ["{", JSON.stringify({ version: 2 }), JSON.stringify({ ...heartbeat(job), attempt: 9 })]) {
      const response = await callback(job, "heartbeat", json("POST", body));
      expect(response.status).toBe(400);
      expect(await errorCode(response)).toBe("invalid_body");
    }
    const badPath = await putOutput(job, "../escape.ts", "x", "video/mp2t");
    expect([400, 404]).toContain(badPath.status);
  });
});

function heartbeat(job: { jobId: string; attempt: number }) {
  return { version: 1, jobId: job.jobId, attempt: job.attempt, stage: "encoding", progress: 0.5 };
}
