// @ts-check
// The real encoder (node encoder/server.mjs, real ffmpeg) against a fake Worker: tiny sources in,
// checked outputs and protocol messages out.

import { mkdir, mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { storyboard } from "../../media-plan/pictures.mjs";
import {
  AUDIO_FRAME,
  AUDIO_RATE,
  firstAudioPacket,
  frameTime,
  planEncoding,
  segmentCount,
  segmentFrames,
  segmentSeconds,
  TIMESTAMP_BASE_SECONDS,
} from "../../media-plan/plan.mjs";
import { MAX_REQUEST_BYTES, segmentName } from "../../media-plan/protocol.mjs";
import { describeBinaries, resolveBinaries, runBinary } from "../binaries.mjs";
import { tracksOf } from "../mp4-index.mjs";
import { startEncoder } from "./encoder-process.mjs";
import { startFakeWorker, TOKEN } from "./fake-worker.mjs";
import { averageColour, ffprobeJson, makeClip, makeSources } from "./media.mjs";

/** @typedef {import("./fake-worker.mjs").FakeWorker} FakeWorker */
/** @typedef {import("./fake-worker.mjs").FakeJob} FakeJob */
/** @typedef {import("./encoder-process.mjs").EncoderProcess} EncoderProcess */
/** @typedef {import("../../media-plan/plan.mjs").Plan} Plan */
/** @typedef {import("../../media-plan/plan.mjs").PlanSettings} PlanSettings */

const ENCODER_TOKEN = "encoder-test-token-0123456789abcdef";
// No ffmpeg is a failure, never a skip: these tests are what says the encoder works. CI runs them
// twice, with the system's ffmpeg and with the npm-packaged pair a fresh machine gets (.ci/run).
const binaries = await resolveBinaries().catch((error) => {
  throw new Error(`the encoder's tests need ffmpeg and ffprobe, and none could be found: ${error.message}`);
});

describe(`encoder service with a fake Worker (${describeBinaries(binaries)})`, () => {
  const bin = binaries;
  /** @type {string} */ let dir;
  /** @type {string} */ let scratch;
  /** @type {FakeWorker} */ let fake;
  /** @type {EncoderProcess} */ let encoder;
  /** @type {Awaited<ReturnType<typeof makeSources>>} */ let sources;
  let jobCount = 0;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "encoder-test-"));
    scratch = join(dir, "scratch");
    await mkdir(join(dir, "tmp"));
    await mkdir(scratch);
    sources = await makeSources(bin, scratch);
    fake = await startFakeWorker(join(dir, "received"));
    encoder = await startEncoder({
      ENCODER_TMPDIR: join(dir, "tmp"),
      ENCODER_TOKEN,
      ENCODER_INTERACTIVE_JOBS: "2",
      ENCODER_BACKGROUND_JOBS: "1",
    });
  });

  afterAll(async () => {
    await encoder?.stop();
    await fake?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  /**
   * Registers a job with the fake Worker and posts it to the encoder.
   * @param {Buffer} source
   * @param {Record<string, unknown>} job the job's kind and its fields
   * @param {Partial<FakeJob>} [init]
   * @param {EncoderProcess} [to]
   */
  async function post(source, job, init = {}, to = encoder) {
    const jobId = `job-${++jobCount}`;
    const { job: fakeJob, callback } = fake.addJob(jobId, { source, watermark: sources.watermark, ...init });
    const response = await fetch(`${to.origin}/v2/jobs`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${ENCODER_TOKEN}` },
      body: JSON.stringify({ version: 2, jobId, priority: "interactive", callback, ...job }),
    });
    return { jobId, job: fakeJob, response };
  }

  /**
   * Posts a job and waits for its result and for the encoder to be idle again.
   * @param {Buffer} source @param {Record<string, unknown>} job @param {Partial<FakeJob>} [init]
   */
  async function run(source, job, init) {
    const posted = await post(source, job, init);
    expect(posted.response.status).toBe(202);
    const result = await posted.job.resultReceived;
    await waitUntilIdle();
    return { ...posted, result };
  }

  /** The encoder runs no job and has left nothing in its temporary folder. */
  async function waitUntilIdle() {
    for (let i = 0; i < 100; i++) {
      const health = /** @type {{ running: Record<string, number> }} */ (
        await (await fetch(`${encoder.origin}/healthz`)).json()
      );
      const busy = Object.values(health.running).some((n) => n > 0);
      if (!busy && (await readdir(join(dir, "tmp"))).length === 0) return;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    throw new Error("the encoder stayed busy");
  }

  /** The plan of `source` under `settings`, from the encoder's own probe. @param {Buffer} source @param {PlanSettings} settings */
  async function planOf(source, settings) {
    const { result } = await run(source, { kind: "probe" });
    if (result.status !== "done" || !result.probe) throw new Error(`probe: ${JSON.stringify(result)}`);
    return planEncoding(result.probe, settings);
  }

  /**
   * Runs segments `from`..`to` of `plan` into `video`'s folder of the fake Worker.
   * @param {Buffer} source @param {Plan} plan @param {number} from @param {number} to @param {string} video @param {Partial<FakeJob>} [init]
   */
  async function segments(source, plan, from, to, video, init = {}) {
    const renditions = plan.renditions.map((r) => r.resolution);
    return run(source, { kind: "segments", priority: "background", plan, from, to, renditions }, { video, ...init });
  }

  /** First timestamps, per stream type, of a stored segment; and its audio packets. @param {string} file */
  async function timestamps(file) {
    const { packets = [] } =
      /** @type {{ packets?: { codec_type?: string, pts_time?: string, duration_time?: string, stream_index?: number }[] }} */ (
        await ffprobeJson(bin.ffprobe, file, [
          "-show_entries",
          "packet=stream_index,pts_time,duration_time",
          "-show_streams",
        ])
      );
    const { streams } = await ffprobeJson(bin.ffprobe, file);
    const typeOf = (/** @type {number | undefined} */ index) => streams.find((s) => s.index === index)?.codec_type;
    const video = packets.filter((p) => typeOf(p.stream_index) === "video").map((p) => Number(p.pts_time));
    const audio = packets.filter((p) => typeOf(p.stream_index) === "audio").map((p) => Number(p.pts_time));
    return { video: Math.min(...video), audio, frames: video.length };
  }

  it("answers /healthz without a token, refuses its job API without one, and logs the binaries it uses", async () => {
    const health = await fetch(`${encoder.origin}/healthz`);
    expect(await health.json()).toMatchObject({
      status: "ok",
      protocol: 2,
      capacity: { interactive: 2, background: 1 },
    });
    for (const authorization of [undefined, "Bearer wrong"]) {
      const response = await fetch(`${encoder.origin}/v2/jobs`, {
        method: "POST",
        headers: { "content-type": "application/json", ...(authorization ? { authorization } : {}) },
        body: "{}",
      });
      expect(response.status).toBe(401);
    }
    expect((await fetch(`${encoder.origin}/v2/jobs/x`, { method: "DELETE" })).status).toBe(401);
    expect(encoder.lines.find((line) => line.startsWith("[encoder] using"))).toBe(
      `[encoder] using ${describeBinaries(bin)}`,
    );
  });

  it("will not start without a token", async () => {
    await expect(startEncoder({ ENCODER_TOKEN: "" })).rejects.toThrow(/ENCODER_TOKEN/);
  });

  it("probes a source through the Worker by byte ranges, never fetching it whole", async () => {
    const { jobId, result } = await run(sources.landscape, { kind: "probe" });
    expect(result).toMatchObject({
      status: "done",
      probe: { format: "mov", width: 640, height: 360, videoStream: 0, audioStream: 1, interlaced: false },
    });
    expect(result.status === "done" && result.probe?.duration).toBeCloseTo(3, 1);
    const reads = fake.calls.filter((call) => call.path === `/jobs/${jobId}/source`);
    expect(reads.length).toBeGreaterThan(1);
    expect(reads.every((call) => call.status === 206)).toBe(true);
  });

  it.each(
    /** @type {const} */ ([
      ["zero bytes", "zero", /format/],
      ["random bytes", "random", /format/],
      ["audio only", "audioOnly", /audio but no video/],
      ["an MP4 cut before its header", "truncated", /format/],
      ["an MP4 cut after its header, before any frame", "headerOnly", /decoded|format/],
      ["an HLS playlist naming a local file, followed by an MPEG-TS", "polyglot", /format/],
      ["a 40 ms Matroska file declaring 10 hours", "declaresTenHours", /declares 36000 s/],
    ]),
  )("reports invalid_source for %s", async (_, name, reason) => {
    const { result, job } = await run(sources[name], { kind: "probe" });
    expect(result).toMatchObject({ status: "failed", code: "invalid_source" });
    expect(result.status === "failed" && result.message).toMatch(/^The source is not a decodable video: .+\.$/);
    expect(result.status === "failed" && result.message).toMatch(reason);
    expect(job.stored).toEqual([]);
  });

  it("probes two frames at 1 fps, and a 100:1 pixel aspect as 32000×240 (which the plan refuses)", async () => {
    const two = await run(sources.twoFrames, { kind: "probe" });
    expect(two.result).toMatchObject({ status: "done", probe: { width: 320, height: 240, frameRate: 1 } });
    expect(two.result.status === "done" && two.result.probe?.duration).toBeCloseTo(2, 1);
    const wide = await run(sources.wide, { kind: "probe" });
    expect(wide.result).toMatchObject({ status: "done", probe: { width: 32000, height: 240 } });
  });

  it("plans a sparse source by the pictures it has: three pictures over 10 hours declared 60 fps make 1 fps", async () => {
    const { result } = await run(sources.sparse, { kind: "probe" });
    expect(result).toMatchObject({ status: "done", probe: { width: 64, height: 64 } });
    const probe = result.status === "done" ? result.probe : undefined;
    expect(probe?.duration).toBeCloseTo(36000, 0);
    expect(probe?.frameRate).toBeLessThan(1);
    const plan = planEncoding(/** @type {NonNullable<typeof probe>} */ (probe), {
      enabledResolutions: ["240p"],
      mp4: false,
      watermark: null,
    });
    expect(plan.frameRate).toEqual({ num: 1, den: 1 });
    expect(plan.frames).toBeLessThanOrEqual(36_001);
  });

  it("makes segments of a run at the plan's size and range, H.264 and AAC, each sent as it is made", async () => {
    const plan = await planOf(sources.landscape, {
      enabledResolutions: ["240p", "360p"],
      mp4: false,
      watermark: { position: "bottom-right", opacity: 0.8 },
    });
    expect(segmentCount(plan)).toBe(1);
    const { job, result } = await segments(sources.landscape, plan, 0, 1, "landscape");
    expect(result).toEqual({ version: 2, jobId: expect.any(String), status: "done" });
    expect(job.stored.sort()).toEqual(["segments/240p/seg_00000.ts", "segments/360p/seg_00000.ts"]);
    expect(fake.problems).toEqual([]);
    for (const r of plan.renditions) {
      const file = fake.file("landscape", `segments/${r.resolution}/seg_00000.ts`);
      const { streams } = await ffprobeJson(bin.ffprobe, file);
      expect(streams.map((s) => [s.codec_type, s.codec_name])).toEqual([
        ["video", "h264"],
        ["audio", "aac"],
      ]);
      expect(streams[0]).toMatchObject({ width: r.width, height: r.height, pix_fmt: "yuv420p" });
      const { video, frames } = await timestamps(file);
      expect(frames).toBe(plan.frames);
      expect(video).toBeCloseTo(TIMESTAMP_BASE_SECONDS + 1.4, 2);
    }
    // The red watermark on the 360p rendition: 96×48 (15% of 640), 13 px (2%) from the bottom right.
    const frame = join(scratch, "frame.png");
    const [red, green, blue] = await averageColour(
      bin.ffmpeg,
      fake.file("landscape", "segments/360p/seg_00000.ts"),
      { x: 640 - 13 - 96 + 8, y: 360 - 13 - 48 + 8, w: 80, h: 32 },
      frame.replace(".png", ".ppm"),
    );
    expect(red).toBeGreaterThan(180);
    expect(Math.max(/** @type {number} */ (green), /** @type {number} */ (blue))).toBeLessThan(80);
  });

  it("lands a segment on the same frames and timestamps whichever run makes it, and audio joins without gap or overlap", async () => {
    const plan = await planOf(sources.long, { enabledResolutions: ["240p"], mp4: false, watermark: null });
    const count = segmentCount(plan);
    expect(count).toBe(3);
    // One run over everything, and each segment alone.
    await segments(sources.long, plan, 0, count, "whole");
    for (let i = 0; i < count; i++) await segments(sources.long, plan, i, i + 1, "alone");
    const audioStep = AUDIO_FRAME / AUDIO_RATE;
    let listed = 0;
    let previousAudioEnd = null;
    for (let i = 0; i < count; i++) {
      const whole = await timestamps(fake.file("whole", `segments/240p/${segmentName(i)}`));
      const alone = await timestamps(fake.file("alone", `segments/240p/${segmentName(i)}`));
      expect(alone.video).toBeCloseTo(whole.video, 3);
      expect(alone.frames).toBe(whole.frames);
      expect(alone.frames).toBe(segmentFrames(plan, i).count);
      // Its first picture is where the durations listed before it end (contract section 15).
      expect(alone.video - (TIMESTAMP_BASE_SECONDS + 1.4)).toBeCloseTo(listed, 1);
      expect(alone.video - frameTime(plan, segmentFrames(plan, i).first)).toBeCloseTo(TIMESTAMP_BASE_SECONDS + 1.4, 3);
      listed += segmentSeconds(plan, i);
      if (bin.features.dropPriming) {
        // Audio packets on one grid: the first of segment i is packet firstAudioPacket(i), and the
        // segments before end exactly where it starts.
        const first = /** @type {number} */ (alone.audio[0]);
        expect((first - TIMESTAMP_BASE_SECONDS - 1.4) / audioStep).toBeCloseTo(firstAudioPacket(plan, i), 3);
        if (previousAudioEnd !== null) expect(first).toBeCloseTo(previousAudioEnd, 4);
        expect(whole.audio[0]).toBeCloseTo(first, 4);
      }
      previousAudioEnd = /** @type {number} */ (alone.audio.at(-1)) + audioStep;
      expect(Math.abs(/** @type {number} */ (alone.audio[0]) - alone.video)).toBeLessThan(0.25);
    }
  });

  it("makes a poster at the highest rendition's size, in full range, and an MP4 in parts from the segments", async () => {
    const plan = await planOf(sources.long, { enabledResolutions: ["240p", "360p"], mp4: true, watermark: null });
    await segments(sources.long, plan, 0, segmentCount(plan), "mp4");
    const still = await run(
      sources.long,
      { kind: "still", plan, time: plan.posterTime, width: null },
      { video: "mp4" },
    );
    expect(still.result).toMatchObject({ status: "done" });
    const poster = fake.file("mp4", `still-${still.jobId}.jpg`);
    const { streams: posterStreams } = await ffprobeJson(bin.ffprobe, poster);
    expect(posterStreams[0]).toMatchObject({ codec_name: "mjpeg", width: 640, height: 360 });

    const partSize = 5 * 1024 * 1024;
    /** The parts of the video's `file` the fake Worker stored, put together in order. */
    const partsOf = async (/** @type {"mp4" | "m4a"} */ file, /** @type {{ partNumber: number }[]} */ parts) =>
      Buffer.concat(
        await Promise.all(parts.map((part) => readFile(fake.file("mp4", `${file}/parts/${part.partNumber}`)))),
      );
    const mp4 = await run(sources.long, { kind: "mp4", priority: "background", plan, partSize }, { video: "mp4" });
    expect(mp4.result).toMatchObject({ status: "done", mp4: { parts: [{ partNumber: 1, etag: expect.any(String) }] } });
    const parts = mp4.result.status === "done" ? (mp4.result.mp4?.parts ?? []) : [];
    const bytes = await partsOf("mp4", parts);
    expect(bytes.length).toBe(mp4.result.status === "done" ? mp4.result.mp4?.bytes : -1);
    const assembled = join(scratch, "assembled.mp4");
    await import("node:fs/promises").then(({ writeFile }) => writeFile(assembled, bytes));
    expect(bytes.indexOf("moov")).toBeLessThan(bytes.indexOf("mdat"));
    // The index first (contract section 15): ftyp, a moov with the duration, a sidx of every
    // fragment per track, then the fragments; a reader finds the duration and any time from the
    // start alone, and seeks anywhere with one more request.
    const top = [];
    for (let at = 0; at < bytes.length; at += bytes.readUInt32BE(at))
      top.push(bytes.toString("latin1", at + 4, at + 8));
    expect(top.slice(0, 5)).toEqual(["ftyp", "moov", "sidx", "sidx", "moof"]);
    // A sidx per track, in its own time scale: ffmpeg's reader (Chromium's too) looks a track
    // without one up in the video's times, and then reads fragment after fragment to seek.
    const { streams: tracks } = await ffprobeJson(bin.ffprobe, assembled, ["-show_entries", "stream=time_base"]);
    const moovAt = bytes.indexOf("moov") - 4;
    const ids = tracksOf(bytes.subarray(moovAt, moovAt + bytes.readUInt32BE(moovAt))).map((track) => track.id);
    expect(new Set(ids).size).toBe(tracks.length);
    const moofs = top.filter((type) => type === "moof").length;
    let at = bytes.indexOf("sidx") - 4;
    for (const [i, track] of tracks.entries()) {
      expect(bytes.toString("latin1", at + 4, at + 8)).toBe("sidx");
      expect(bytes.readUInt32BE(at + 12)).toBe(ids[i]);
      expect(`1/${bytes.readUInt32BE(at + 16)}`).toBe(track.time_base);
      expect(bytes.readUInt16BE(at + 38)).toBe(moofs);
      let total = 0;
      for (let i = 0; i < moofs; i++) total += bytes.readUInt32BE(at + 40 + 12 * i + 4);
      expect(total / bytes.readUInt32BE(at + 16)).toBeCloseTo(plan.duration, 1);
      at += bytes.readUInt32BE(at);
    }
    const trace = await runBinary(bin.ffprobe, ["-v", "trace", "-show_entries", "format=duration", assembled]);
    expect((trace.stderr.match(/type:'moof'/g) ?? []).length).toBeLessThanOrEqual(1);
    const { streams } = await ffprobeJson(bin.ffprobe, assembled);
    expect(streams.map((s) => [s.codec_name, s.width ?? null])).toEqual([
      ["h264", 640],
      ["aac", null],
    ]);
    const format = /** @type {{ format: { duration: string } }} */ (
      /** @type {unknown} */ (await ffprobeJson(bin.ffprobe, assembled, ["-show_format"]))
    );
    expect(Number(format.format.duration)).toBeCloseTo(plan.duration, 0);
    expect(Math.max(...fake.calls.map((call) => call.bytes))).toBeLessThanOrEqual(MAX_REQUEST_BYTES);

    // The M4A (contract section 19): the lowest rendition's AAC copied into an audio-only MP4 with
    // its moov first, the whole duration, sent as parts.
    const m4a = await run(sources.long, { kind: "m4a", priority: "background", plan, partSize }, { video: "mp4" });
    expect(m4a.result).toMatchObject({ status: "done", m4a: { parts: [{ partNumber: 1, etag: expect.any(String) }] } });
    const m4aParts = m4a.result.status === "done" ? (m4a.result.m4a?.parts ?? []) : [];
    const audio = await partsOf("m4a", m4aParts);
    expect(audio.length).toBe(m4a.result.status === "done" ? m4a.result.m4a?.bytes : -1);
    expect(audio.toString("latin1", 8, 12)).toBe("M4A ");
    expect(audio.indexOf("moov")).toBeLessThan(audio.indexOf("mdat"));
    const audioFile = join(scratch, "assembled.m4a");
    await import("node:fs/promises").then(({ writeFile }) => writeFile(audioFile, audio));
    const { streams: audioStreams } = await ffprobeJson(bin.ffprobe, audioFile);
    expect(audioStreams.map((s) => [s.codec_type, s.codec_name, s.channels])).toEqual([["audio", "aac", 2]]);
    const audioFormat = /** @type {{ format: { duration: string } }} */ (
      /** @type {unknown} */ (await ffprobeJson(bin.ffprobe, audioFile, ["-show_format"]))
    );
    expect(Math.abs(Number(audioFormat.format.duration) - plan.duration)).toBeLessThanOrEqual(0.1);
    // Read from the lowest rendition only.
    const read = fake.calls.filter((call) => call.path.startsWith(`/jobs/${m4a.jobId}/segments/`));
    expect(new Set(read.map((call) => call.path.split("/")[4]))).toEqual(new Set(["240p"]));
  });

  it("makes a still of any frame at any width, and the storyboard: a tile per cue from within it, in one sprite", async () => {
    // Red for 6 s, then blue: which half a picture shows says which time it was taken at.
    const halves = await makeClip(bin.ffmpeg, join(scratch, "halves.mp4"), {
      width: 640,
      height: 360,
      seconds: 12,
      extra: ["-vf", "drawbox=c=red:t=fill:enable='lt(t,6)',drawbox=c=blue:t=fill:enable='gte(t,6)'"],
    });
    const plan = await planOf(halves, { enabledResolutions: ["360p"], mp4: false, watermark: null });
    const colourOf = async (
      /** @type {string} */ file,
      /** @type {{ x: number, y: number, w: number, h: number }} */ area,
    ) => averageColour(bin.ffmpeg, file, area, join(scratch, "colour.ppm"));
    const isBlue = (/** @type {number[]} */ [r, , b]) => (b ?? 0) > 150 && (r ?? 0) < 100;
    const isRed = (/** @type {number[]} */ [r, , b]) => (r ?? 0) > 150 && (b ?? 0) < 100;

    const frame = await run(halves, { kind: "still", plan, time: 9, width: 100 }, { video: "frames" });
    expect(frame.result).toMatchObject({ status: "done" });
    const still = fake.file("frames", `still-${frame.jobId}.jpg`);
    expect((await ffprobeJson(bin.ffprobe, still)).streams[0]).toMatchObject({ width: 100, height: 56 });
    expect(isBlue(await colourOf(still, { x: 10, y: 10, w: 80, h: 36 }))).toBe(true);

    const board = storyboard(plan);
    expect(board).toMatchObject({ tileWidth: 240, tileHeight: 136, columns: 2, rows: 1 });
    const made = await run(halves, { kind: "storyboard", priority: "background", plan }, { video: "frames" });
    expect(made.result).toMatchObject({ status: "done" });
    const sprite = fake.file("frames", `still-${made.jobId}.jpg`);
    expect((await ffprobeJson(bin.ffprobe, sprite)).streams[0]).toMatchObject({
      codec_name: "mjpeg",
      width: 480,
      height: 136,
    });
    expect(isRed(await colourOf(sprite, { x: 20, y: 20, w: 200, h: 96 }))).toBe(true);
    expect(isBlue(await colourOf(sprite, { x: 260, y: 20, w: 200, h: 96 }))).toBe(true);
  });

  it("labels a 9:16 full-range source's renditions by width, in limited range", async () => {
    const plan = await planOf(sources.portrait, {
      enabledResolutions: ["240p", "360p", "1080p"],
      mp4: false,
      watermark: null,
    });
    expect(plan.renditions.map((r) => [r.resolution, r.width, r.height])).toEqual([
      ["240p", 240, 426],
      ["360p", 360, 640],
    ]);
    await segments(sources.portrait, plan, 0, 1, "portrait");
    const { streams } = await ffprobeJson(bin.ffprobe, fake.file("portrait", "segments/360p/seg_00000.ts"));
    expect(streams[0]).toMatchObject({ codec_name: "h264", width: 360, height: 640, pix_fmt: "yuv420p" });
  });

  it("gives a silent source no audio stream, and draws a WebP watermark top-left", async () => {
    const plan = await planOf(sources.silent, {
      enabledResolutions: ["240p"],
      mp4: false,
      watermark: { position: "top-left", opacity: 1 },
    });
    expect(plan.audio).toBe(false);
    expect(plan.renditions.map((r) => r.codecs)).toEqual([expect.stringMatching(/^avc1\.6400[0-9a-f]{2}$/)]);
    await segments(sources.silent, plan, 0, 1, "silent", { watermark: sources.watermarkWebp });
    const file = fake.file("silent", "segments/180p/seg_00000.ts");
    const { streams } = await ffprobeJson(bin.ffprobe, file);
    expect(streams.map((s) => s.codec_type)).toEqual(["video"]);
    // The blue watermark: 48×24 (15% of 320), 6 px (2%) from the top and left edges.
    const colour = await averageColour(bin.ffmpeg, file, { x: 10, y: 10, w: 40, h: 16 }, join(scratch, "p.ppm"));
    expect(colour[2]).toBeGreaterThan(180);
    expect(Math.max(/** @type {number} */ (colour[0]), /** @type {number} */ (colour[1]))).toBeLessThan(80);
  });

  it("applies rotation metadata, and encodes two frames at 1 fps", async () => {
    const rotated = await planOf(sources.rotated, { enabledResolutions: ["360p"], mp4: false, watermark: null });
    expect([rotated.width, rotated.height]).toEqual([180, 320]);
    await segments(sources.rotated, rotated, 0, 1, "rotated");
    const { streams } = await ffprobeJson(bin.ffprobe, fake.file("rotated", "segments/180p/seg_00000.ts"));
    expect(streams[0]).toMatchObject({ width: 180, height: 320 });

    const two = await planOf(sources.twoFrames, { enabledResolutions: ["240p"], mp4: false, watermark: null });
    const { result } = await segments(sources.twoFrames, two, 0, 1, "two");
    expect(result).toMatchObject({ status: "done" });
    const { frames } = await timestamps(fake.file("two", "segments/240p/seg_00000.ts"));
    expect(frames).toBe(2);
  });

  it("makes every output of two frames at 1 fps: segments, the poster, the storyboard and the MP4 (either ffmpeg)", async () => {
    const plan = await planOf(sources.twoFrames, { enabledResolutions: ["240p"], mp4: true, watermark: null });
    const made = await segments(sources.twoFrames, plan, 0, segmentCount(plan), "two-all");
    expect(made.result).toMatchObject({ status: "done" });
    const { frames } = await timestamps(fake.file("two-all", "segments/240p/seg_00000.ts"));
    expect(frames).toBe(2);
    const poster = await run(
      sources.twoFrames,
      { kind: "still", plan, time: plan.posterTime, width: null },
      { video: "two-all" },
    );
    expect(poster.result).toMatchObject({ status: "done" });
    const board = await run(
      sources.twoFrames,
      { kind: "storyboard", priority: "background", plan },
      { video: "two-all" },
    );
    expect(board.result).toMatchObject({ status: "done" });
    const mp4 = await run(
      sources.twoFrames,
      { kind: "mp4", priority: "background", plan, partSize: 5 * 1024 * 1024 },
      { video: "two-all" },
    );
    expect(mp4.result).toMatchObject({ status: "done" });
  });

  it("reports encoding_failed when a segment is refused, and retries one answered 503", async () => {
    const plan = await planOf(sources.silent, { enabledResolutions: ["240p"], mp4: false, watermark: null });
    const refused = await segments(sources.silent, plan, 0, 1, "refused", { onStore: () => 400 });
    expect(refused.result).toMatchObject({
      status: "failed",
      code: "encoding_failed",
      message: "The video could not be encoded.",
    });
    const mine = fake.calls.filter((call) => call.path.startsWith(`/jobs/${refused.jobId}/`));
    expect(mine.at(-1)?.path).toBe(`/jobs/${refused.jobId}/result`);
    // A 503 is retried.
    let answered = 0;
    const retried = await segments(sources.silent, plan, 0, 1, "retried", {
      onStore: () => (answered++ === 0 ? 503 : undefined),
    });
    expect(retried.result).toMatchObject({ status: "done" });
    const puts = fake.calls.filter((call) => call.path === `/jobs/${retried.jobId}/segments/180p/seg_00000.ts`);
    expect(puts.map((call) => call.status)).toEqual([503, 204]);
  });

  it("stops without a word when the Worker answers a heartbeat with 410", async () => {
    const plan = await planOf(sources.long, { enabledResolutions: ["360p"], mp4: false, watermark: null });
    const { jobId, job, response } = await post(
      sources.long,
      { kind: "segments", plan, from: 0, to: 3, renditions: ["360p"] },
      { onHeartbeat: () => 410 },
    );
    expect(response.status).toBe(202);
    await waitUntilIdle();
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(job.results).toEqual([]);
    expect(encoder.lines.some((line) => line.includes(`job ${jobId} (segments) cancelled`))).toBe(true);
  });

  it("refuses a malformed job with 400, naming the field", async () => {
    const post400 = (/** @type {string} */ body, type = "application/json") =>
      fetch(`${encoder.origin}/v2/jobs`, {
        method: "POST",
        headers: { "content-type": type, authorization: `Bearer ${ENCODER_TOKEN}` },
        body,
      });
    const response = await post400(
      JSON.stringify({
        version: 2,
        jobId: "bad",
        kind: "probe",
        priority: "soon",
        callback: { baseUrl: fake.origin, token: TOKEN },
      }),
    );
    expect(response.status).toBe(400);
    expect(await response.json()).toEqual({
      error: { code: "invalid_job", message: expect.stringContaining("priority"), path: "priority" },
    });
    expect((await post400("{")).status).toBe(400);
    expect((await post400("{}", "text/plain")).status).toBe(415);
  });

  it("runs as many jobs of a priority as it may (409 for a job it runs, 503 past its room) and cancels: ffmpeg killed, nothing sent", async () => {
    const plan = await planOf(sources.long, { enabledResolutions: ["240p", "360p"], mp4: false, watermark: null });
    const background = { kind: "segments", priority: "background", plan, from: 0, to: 3, renditions: ["240p", "360p"] };
    const { jobId, job, response } = await post(sources.long, background);
    expect(response.status).toBe(202);
    for (let i = 0; i < 200 && encoder.children().length === 0; i++) await new Promise((r) => setTimeout(r, 25));
    expect(encoder.children().length).toBeGreaterThan(0);
    const another = await post(sources.long, background);
    expect(another.response.status).toBe(503);
    expect(another.response.headers.get("retry-after")).toBe("2");
    const same = await fetch(`${encoder.origin}/v2/jobs`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${ENCODER_TOKEN}` },
      body: JSON.stringify({
        version: 2,
        jobId,
        callback: { baseUrl: `${fake.origin}/jobs/${jobId}`, token: TOKEN },
        ...background,
      }),
    });
    expect(same.status).toBe(409);
    const status = await fetch(`${encoder.origin}/v2/jobs/${jobId}`, {
      headers: { authorization: `Bearer ${ENCODER_TOKEN}` },
    });
    expect(await status.json()).toMatchObject({ version: 2, jobId, kind: "segments" });
    const cancelled = await fetch(`${encoder.origin}/v2/jobs/${jobId}`, {
      method: "DELETE",
      headers: { authorization: `Bearer ${ENCODER_TOKEN}` },
    });
    expect(cancelled.status).toBe(204);
    expect(encoder.children()).toEqual([]);
    await waitUntilIdle();
    const heartbeats = job.heartbeats.length;
    await new Promise((resolve) => setTimeout(resolve, 600));
    expect(job.heartbeats.length).toBe(heartbeats);
    expect(job.results).toEqual([]);
  });

  it("on SIGTERM interrupts its jobs, reports them interrupted so the Worker runs them again (no try counted), and exits", async () => {
    const second = await startEncoder({ ENCODER_TMPDIR: join(dir, "tmp"), ENCODER_TOKEN });
    try {
      const plan = await planOf(sources.long, { enabledResolutions: ["360p"], mp4: false, watermark: null });
      const { job, response } = await post(
        sources.long,
        { kind: "segments", plan, from: 0, to: 3, renditions: ["360p"] },
        {},
        second,
      );
      expect(response.status).toBe(202);
      for (let i = 0; i < 200 && second.children().length === 0; i++) await new Promise((r) => setTimeout(r, 25));
      process.kill(second.pid, "SIGTERM");
      expect(await job.resultReceived).toMatchObject({ status: "failed", code: "interrupted" });
      expect(await second.exited).toEqual({ code: 0, signal: null });
      expect(await readdir(join(dir, "tmp"))).toEqual([]);
    } finally {
      await second.stop();
    }
  });
});
