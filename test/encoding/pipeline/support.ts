import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { afterEach, beforeEach, vi } from "vitest";
import { storyboard } from "../../../media-plan/pictures.mjs";
import { type Probe, segmentCount } from "../../../media-plan/plan.mjs";
import { type Job, parseJob, segmentName, type Word } from "../../../media-plan/protocol.mjs";
import { coordinatorOf, poolOf } from "../../../src/encoding/pipeline/coordinator-stub";
import { CAPTIONS_QUEUE, type CaptionMessage } from "../../../src/queues/captions";
import { ENCODE_QUEUE } from "../../../src/queues/encodings";
import { api, bearer, json, newVideo } from "../../helpers";
import { runQueue } from "../../support/handlers";

/**
 * A fake encoder at ENCODER_URL (http://encoder.test, vitest.config.ts): it records the jobs the
 * coordinators start (checked with the encoder's own parser) and the jobs they cancel, answers
 * busy while `busy` is set, and says it runs a job until it is cancelled or `forget` drops it (an
 * encoder that restarted); its health check says it hears English speech (`speech`, null for an
 * encoder without a speech engine). The tests then play the encoder's part through the real
 * callback routes.
 */
const realFetch = globalThis.fetch;

export function fakeEncoder() {
  const state = {
    jobs: [] as Job[],
    cancelled: [] as string[],
    running: new Set<string>(),
    busy: false,
    speech: { engine: "pocketsphinx", languages: ["en"] } as { engine: string; languages: string[] } | null,
    /** An encoder that restarted: it knows none of its jobs any more. */
    forget() {
      state.running.clear();
    },
  };
  // The runtime's own fetch, kept when this module loads: a fake made while another is still in
  // place replaces it (vi.spyOn returns the same spy) instead of calling through it.
  vi.spyOn(globalThis, "fetch").mockImplementation(async (input, init) => {
    const request = new Request(input, init);
    const url = new URL(request.url);
    if (url.host !== "encoder.test") return realFetch(input, init);
    if (request.headers.get("authorization") !== `Bearer ${env.ENCODER_TOKEN}`)
      return new Response(null, { status: 401 });
    if (request.method === "GET" && url.pathname === "/healthz")
      return Response.json({ status: "ok", speech: state.speech });
    if (request.method === "POST" && url.pathname === "/v2/jobs") {
      if (state.busy) return Response.json({ error: { code: "busy" } }, { status: 503 });
      const job = parseJob(await request.json());
      state.jobs.push(job);
      state.running.add(job.jobId);
      return Response.json({ status: "accepted" }, { status: 202 });
    }
    const jobId = url.pathname.split("/").at(-1) as string;
    if (request.method === "DELETE") {
      state.cancelled.push(jobId);
      state.running.delete(jobId);
      return new Response(null, { status: 204 });
    }
    if (request.method === "GET") return new Response(null, { status: state.running.has(jobId) ? 200 : 404 });
    return new Response(null, { status: 404 });
  });
  return state;
}
export type FakeEncoder = ReturnType<typeof fakeEncoder>;

/**
 * A fresh fake encoder and an empty pool before each test of the file (or `describe`) that calls
 * it, the mocks restored after: the current test's encoder, through the function it returns.
 */
export function withFakeEncoder(): () => FakeEncoder {
  let encoder: FakeEncoder | undefined;
  beforeEach(async () => {
    encoder = fakeEncoder();
    await emptyPool();
  });
  afterEach(() => {
    vi.restoreAllMocks();
  });
  return () => {
    if (!encoder) throw new Error("withFakeEncoder's encoder is there only inside a test");
    return encoder;
  };
}

/**
 * Frees every slot of the encoder pool and forgets every project's use: storage is kept across the
 * tests of a file, and one
 * test's videos must not hold the slots the next one needs.
 */
export async function emptyPool() {
  await runInDurableObject(poolOf(env), (_instance, state) => {
    for (const table of ["leases", "demand", "usage", "granted"]) state.storage.sql.exec(`DELETE FROM ${table}`);
  });
}

/** The videos the tests have uploaded, whose coordinators `stopEncodings` stops. */
const uploaded = new Set<string>();

/**
 * Stops the encoding of every video uploaded so far: a test's coordinators otherwise keep ticking
 * (their alarms take over the jobs the next test's fake encoder does not know, on the slots that
 * test needs).
 */
export async function stopEncodings() {
  for (const id of uploaded) await coordinatorOf(env, id).cancel();
  uploaded.clear();
}

/** A video whose upload is complete (status uploaded), its source `bytes`. */
export async function uploadedVideo(key: string, bytes: Uint8Array = new TextEncoder().encode("source bytes")) {
  const { video } = await newVideo(key, { title: "clip" });
  const part = await api(
    `/v1/videos/${video.id}/upload/parts/1`,
    bearer(key, { method: "PUT", body: bytes, headers: { "content-type": "application/octet-stream" } }),
  );
  const { etag } = (await part.json()) as { etag: string };
  const done = await api(
    `/v1/videos/${video.id}/upload/complete`,
    bearer(key, json("POST", { parts: [{ partNumber: 1, etag }] })),
  );
  if (done.status !== 200) throw new Error(`complete: ${done.status} ${await done.text()}`);
  uploaded.add(video.id);
  return video as { id: string; projectId: string };
}

/** The encode messages the Worker sent since the test began. */
export function encodeMessages(): { projectId: string; videoId: string }[] {
  return vi.mocked(env.ENCODE_QUEUE.send).mock.calls.map(([body]) => body as { projectId: string; videoId: string });
}

/** Runs the encodings queue's handler over these messages, as the Queues runtime would. */
export function runEncodes(messages: { projectId: string; videoId: string }[]) {
  return runQueue(ENCODE_QUEUE, messages);
}

/** The messages sent to the caption-generations queue since the test began. */
export function captionMessages(): CaptionMessage[] {
  return vi.mocked(env.CAPTIONS_QUEUE.send).mock.calls.map(([body]) => body as CaptionMessage);
}

/**
 * Runs the encodings queue's handler over the messages sent for `videoId` that it has not run yet
 * (a track's speech asked for), as the Queues runtime would.
 */
export async function runNewEncodes(videoId: string) {
  const all = encodeMessages().filter((message) => message.videoId === videoId);
  const fresh = all.filter((message) => !ranEncodes.has(message));
  for (const message of fresh) ranEncodes.add(message);
  if (fresh.length > 0) await runEncodes(fresh);
}
const ranEncodes = new WeakSet<object>();

/** Runs the caption-generations queue's handler over the messages sent for `videoId` that it has not run yet. */
export async function runNewCaptions(videoId: string) {
  const fresh = captionMessages().filter((message) => message.videoId === videoId && !ranCaptions.has(message));
  for (const message of fresh) ranCaptions.add(message);
  if (fresh.length > 0) await runQueue(CAPTIONS_QUEUE, fresh);
}
const ranCaptions = new WeakSet<object>();

/** The coordinator's view of a video's encoding. */
export function encodingState(videoId: string) {
  return coordinatorOf(env, videoId).state();
}

/** The jobs the encoder got for a video, of `kind` (and matching `where`). */
export function jobsOf(encoder: FakeEncoder, videoId: string, kind?: Job["kind"]): Job[] {
  return encoder.jobs.filter((job) => job.callback.baseUrl.includes(`/${videoId}/`) && (!kind || job.kind === kind));
}

/** The job of `kind` the encoder got last for the video; fails the test when there is none. */
export function lastJob<K extends Job["kind"]>(
  encoder: FakeEncoder,
  videoId: string,
  kind: K,
): Extract<Job, { kind: K }> {
  const job = jobsOf(encoder, videoId, kind).at(-1);
  if (!job) throw new Error(`no ${kind} job for ${videoId}: ${JSON.stringify(encoder.jobs.map((j) => j.jobId))}`);
  return job as Extract<Job, { kind: K }>;
}

/** One of the encoder's calls back about `job`, to `path` under its callback URL. */
export function callback(job: Job, path: string, init: RequestInit = {}, token = job.callback.token) {
  const base = new URL(job.callback.baseUrl).pathname;
  return api(`${base}/${path}`, {
    ...init,
    headers: { authorization: `Bearer ${token}`, ...(init.headers as Record<string, string>) },
  });
}

async function expectStatus(response: Promise<Response>, statuses: number[], what: string) {
  const answer = await response;
  if (!statuses.includes(answer.status)) throw new Error(`${what}: ${answer.status} ${await answer.text()}`);
  return answer;
}

/** What a probe of a 1280×720 25 fps source with audio finds, `seconds` long. */
export function probeFacts(seconds = 10, extra: Partial<Probe> = {}): Probe {
  return {
    format: "mov",
    duration: seconds,
    startTime: 0,
    width: 1280,
    height: 720,
    frameRate: 25,
    videoStream: 0,
    audioStream: 1,
    interlaced: false,
    ...extra,
  };
}

/** Jobs whose result the tests have sent, by callback URL (job ids repeat across videos). */
const reported = new Set<string>();

/** The encoder's result of `job`: done (with its fields), or failed. */
export function result(job: Job, fields: Record<string, unknown> = {}) {
  reported.add(job.callback.baseUrl);
  return callback(job, "result", json("POST", { version: 2, jobId: job.jobId, status: "done", ...fields }));
}

export function failWith(job: Job, code: "invalid_source" | "encoding_failed" | "interrupted", message = "It failed.") {
  reported.add(job.callback.baseUrl);
  return callback(job, "result", json("POST", { version: 2, jobId: job.jobId, status: "failed", code, message }));
}

/** Bytes standing for segment `index` of `resolution` as job `jobId` made it. */
export function segmentBytes(resolution: string, index: number, jobId: string): Uint8Array {
  return new TextEncoder().encode(`${resolution}/${segmentName(index)} by ${jobId}`.padEnd(188, "."));
}

export function putSegment(
  job: Job,
  resolution: string,
  index: number,
  bytes = segmentBytes(resolution, index, job.jobId),
) {
  return callback(job, `segments/${resolution}/${segmentName(index)}`, {
    method: "PUT",
    body: bytes,
    headers: { "content-type": "video/mp2t" },
  });
}

/** Plays the encoder's whole part of a segments job: every segment stored, then the result. */
export async function finishSegments(job: Extract<Job, { kind: "segments" }>) {
  for (const resolution of job.renditions) {
    for (let index = job.from; index < job.to; index++) {
      await expectStatus(putSegment(job, resolution, index), [204], `PUT ${resolution}/${index}`);
    }
  }
  await expectStatus(result(job), [204], "segments result");
}

/** Bytes standing for segment `index` of an added audio track as job `jobId` made it. */
export function audioSegmentBytes(index: number, jobId: string): Uint8Array {
  return new TextEncoder().encode(`audio/${segmentName(index)} by ${jobId}`.padEnd(188, "."));
}

/** An audio job's call back storing segment `index` of its track. */
export function putAudioSegment(job: Job, index: number, bytes = audioSegmentBytes(index, job.jobId)) {
  return callback(job, `audio/${segmentName(index)}`, {
    method: "PUT",
    body: bytes,
    headers: { "content-type": "video/mp2t" },
  });
}

/** Plays the encoder's whole part of an audio job: every segment of its run stored, then the result. */
export async function finishAudio(job: Extract<Job, { kind: "audio" }>) {
  for (let index = job.from; index < job.to; index++) {
    await expectStatus(putAudioSegment(job, index), [204], `PUT audio/${index}`);
  }
  await expectStatus(result(job), [204], "audio result");
}

/** Plays a still job (or a storyboard's, once its tiles are read): the JPEG stored, then the result. */
export async function finishStill(job: Job) {
  await expectStatus(
    callback(job, "still", { method: "PUT", body: JPEG, headers: { "content-type": "image/jpeg" } }),
    [204],
    "still",
  );
  await expectStatus(result(job), [204], "still result");
}

/** The JPEG bytes the tests store as a picture. */
const JPEG = new Uint8Array([0xff, 0xd8, 0xff, 0xe0, 0, 0, 0xff, 0xd9]);

/** Plays a tiles job: each tile stored, then the result. */
export async function finishTiles(job: Extract<Job, { kind: "tiles" }>) {
  for (let cue = job.from; cue < job.to; cue++) {
    const put = callback(job, `tiles/${cue}`, { method: "PUT", body: JPEG, headers: { "content-type": "image/jpeg" } });
    await expectStatus(put, [204], `tile ${cue}`);
  }
  await expectStatus(result(job), [204], "tiles result");
}

/** A speech job's result: the words it heard (times in seconds of the video). */
export function heardWords(job: Job, words: Word[]) {
  return result(job, { speech: { words } });
}
/** Plays a storyboard job: every tile read back, the sprite stored, then the result. */
export async function finishStoryboard(job: Extract<Job, { kind: "storyboard" }>) {
  for (let cue = 0; cue < storyboard(job.plan).cues.length; cue++) {
    const tile = await expectStatus(callback(job, `tiles/${cue}`), [200], `GET tile ${cue}`);
    await tile.arrayBuffer();
  }
  await finishStill(job);
}

/**
 * Plays a part of an MP4 job (or an M4A job): `bytes` as its part, the file's segments up to
 * `to` (all of them unless told), its fragments `fragments` (one of its size unless told); a first
 * part that does not reach the end only measures (nothing sent, no ETag).
 */
export async function finishFilePart(
  job: Extract<Job, { kind: "mp4" | "m4a" }>,
  bytes: Uint8Array,
  made: { to?: number; fragments?: { size: number; times: number[] }[] } = {},
) {
  const to = made.to ?? job.to ?? segmentCount(job.plan);
  const fragments = made.fragments ?? [{ size: bytes.byteLength, times: [0] }];
  let etag: string | null = null;
  if (job.part > 1 || to === segmentCount(job.plan) || job.to !== null) {
    const type = job.kind === "mp4" ? "video/mp4" : "audio/mp4";
    const put = callback(job, `${job.kind}/parts/${job.part}`, {
      method: "PUT",
      body: bytes,
      headers: { "content-type": type },
    });
    etag = ((await (await expectStatus(put, [200], `${job.kind} part`)).json()) as { etag: string }).etag;
  }
  await expectStatus(result(job, { [job.kind]: { to, fragments, origin: 0, etag } }), [204], `${job.kind} result`);
}

/** Plays an MP4 job that holds the whole file in its one part. */
export function finishMp4(job: Job, bytes = new TextEncoder().encode("an mp4 file")) {
  if (job.kind !== "mp4") throw new Error(`not an mp4 job: ${job.kind}`);
  return finishFilePart(job, bytes);
}

/** Plays an M4A job that holds the whole file in its one part. */
export function finishM4a(job: Job, bytes = new TextEncoder().encode("an m4a file")) {
  if (job.kind !== "m4a") throw new Error(`not an m4a job: ${job.kind}`);
  return finishFilePart(job, bytes);
}

/** An uploaded video whose encoding has started: its probe job runs on the fake encoder. */
export async function encoding(encoder: FakeEncoder, key: string, bytes?: Uint8Array) {
  const video = await uploadedVideo(key, bytes);
  await runEncodes(encodeMessages().filter((message) => message.videoId === video.id));
  return { id: video.id, projectId: video.projectId, probe: lastJob(encoder, video.id, "probe") };
}

/** An encoding made playable by its probe's result (`facts`). */
export async function playable(encoder: FakeEncoder, key: string, facts: Probe = probeFacts()) {
  const started = await encoding(encoder, key);
  await expectStatus(result(started.probe, { probe: facts }), [204], "probe result");
  return started;
}

/**
 * Plays every job the video's coordinator starts until it has nothing left to start: what is
 * left runs as the tests' encoder would, in the order it was started.
 */
export async function finishAll(
  encoder: FakeEncoder,
  videoId: string,
  options: { mp4?: Uint8Array; m4a?: Uint8Array; words?: (job: Extract<Job, { kind: "speech" }>) => Word[] } = {},
) {
  const done = new Set<string>();
  for (let round = 0; round < 200; round++) {
    const next = jobsOf(encoder, videoId).find(
      (job) => !done.has(job.jobId) && !reported.has(job.callback.baseUrl) && encoder.running.has(job.jobId),
    );
    if (!next) return;
    done.add(next.jobId);
    encoder.running.delete(next.jobId);
    await finishJob(next, options);
  }
  throw new Error("finishAll did not finish");
}

/** Plays `job` as the tests' encoder would, whatever its kind (an MP4's or M4A's in one part; a speech job hears `words`). */
export async function finishJob(
  job: Job,
  options: { mp4?: Uint8Array; m4a?: Uint8Array; words?: (job: Extract<Job, { kind: "speech" }>) => Word[] } = {},
) {
  if (job.kind === "segments") await finishSegments(job);
  else if (job.kind === "still") await finishStill(job);
  else if (job.kind === "tiles") await finishTiles(job);
  else if (job.kind === "storyboard") await finishStoryboard(job);
  else if (job.kind === "mp4") await finishMp4(job, options.mp4);
  else if (job.kind === "m4a") await finishM4a(job, options.m4a);
  else if (job.kind === "speech") await expectStatus(heardWords(job, options.words?.(job) ?? []), [204], "speech");
  else if (job.kind === "audio") await finishAudio(job);
  else throw new Error(`finishJob does not play ${job.kind} jobs`);
}
