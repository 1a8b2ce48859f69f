// @ts-check
// The real encoder (node encoder/server.mjs, real ffmpeg) against a fake Worker: tiny sources in,
// checked outputs and protocol messages out.

import { mkdir, mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { describeBinaries, resolveBinaries } from "../binaries.mjs";
import { STAGES } from "../protocol.mjs";
import { startEncoder } from "./encoder-process.mjs";
import { startFakeWorker, TOKEN } from "./fake-worker.mjs";
import { averageColour, ffprobeJson, makeSources } from "./media.mjs";

/** @typedef {import("./fake-worker.mjs").FakeWorker} FakeWorker */
/** @typedef {import("./fake-worker.mjs").FakeJob} FakeJob */
/** @typedef {import("./encoder-process.mjs").EncoderProcess} EncoderProcess */
/** @typedef {import("../protocol.mjs").Job["settings"]} Settings */
/** @typedef {import("../protocol.mjs").ReadyResult} ReadyResult */

const binaries = await resolveBinaries().catch((error) => {
  console.warn(`encoder integration tests skipped: no ffmpeg/ffprobe could be found (${error.message})`);
  return null;
});

describe.skipIf(!binaries)("encoder service with a fake Worker", () => {
  const bin = /** @type {import("../binaries.mjs").Binaries} */ (binaries);
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
    encoder = await startEncoder({ ENCODER_TMPDIR: join(dir, "tmp") });
  });

  afterAll(async () => {
    await encoder?.stop();
    await fake?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  /** @param {Partial<Settings>} [settings] @returns {Settings} */
  const settingsOf = (settings = {}) => ({ enabledResolutions: ["360p"], mp4: false, watermark: null, ...settings });

  /**
   * Registers a job with the fake Worker and posts it to the encoder.
   * @param {Buffer} source
   * @param {Partial<Settings>} [settings]
   * @param {Partial<FakeJob>} [init]
   */
  async function post(source, settings, init = {}) {
    const jobId = `job-${++jobCount}`;
    const { job, callback } = fake.addJob(jobId, { source, watermark: sources.watermark, ...init });
    const response = await fetch(`${encoder.origin}/v1/jobs`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ version: 1, jobId, attempt: 1, callback, settings: settingsOf(settings) }),
    });
    return { jobId, job, response };
  }

  /**
   * Posts a job and waits for its result.
   * @param {Buffer} source
   * @param {Partial<Settings>} [settings]
   */
  async function encode(source, settings) {
    return finished(await post(source, settings));
  }

  /**
   * Waits for a posted job's result and for the encoder to be idle again.
   * @param {Awaited<ReturnType<typeof post>>} posted
   */
  async function finished(posted) {
    expect(posted.response.status).toBe(202);
    const result = await posted.job.resultReceived;
    await waitUntilIdle();
    return { ...posted, result, out: join(dir, "received", posted.jobId) };
  }

  /** The encoder has no job and has left nothing in its temporary folder. */
  async function waitUntilIdle() {
    for (let i = 0; i < 100; i++) {
      const health = /** @type {{ busy: boolean }} */ (await (await fetch(`${encoder.origin}/healthz`)).json());
      if (!health.busy && (await readdir(join(dir, "tmp"))).length === 0) return;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    throw new Error("the encoder stayed busy");
  }

  /** @param {import("../protocol.mjs").Result} result @returns {ReadyResult} */
  function ready(result) {
    if (result.status !== "ready") throw new Error(`not ready: ${JSON.stringify(result)}`);
    return result;
  }

  /**
   * Every callback of a finished job: each file uploaded once with its type, heartbeats in order,
   * and the result last.
   * @param {string} jobId
   * @param {FakeJob} job
   * @param {ReadyResult} result
   */
  function expectWellBehaved(jobId, job, result) {
    expect(fake.problems).toEqual([]);
    expect(job.results).toHaveLength(1);
    const uploaded = job.uploads.map((u) => u.path).sort();
    expect(uploaded).toEqual([...result.files].sort());
    const types = { m3u8: "application/vnd.apple.mpegurl", ts: "video/mp2t", mp4: "video/mp4", jpg: "image/jpeg" };
    for (const upload of job.uploads) {
      expect(upload.contentType).toBe(types[/** @type {keyof typeof types} */ (upload.path.split(".").pop())]);
    }
    const mine = fake.calls.filter((call) => call.path.startsWith(`/jobs/${jobId}/`));
    expect(mine.at(-1)?.path).toBe(`/jobs/${jobId}/result`);
    expect(job.heartbeats.length).toBeGreaterThan(0);
    const progress = job.heartbeats.map((h) => h.progress);
    expect(progress).toEqual([...progress].sort((a, b) => a - b));
    for (const h of job.heartbeats) expect(STAGES).toContain(h.stage);
  }

  it("answers /healthz and logs the binaries it uses", async () => {
    const response = await fetch(`${encoder.origin}/healthz`);
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ status: "ok", protocol: 1, busy: false });
    expect(encoder.lines.find((line) => line.startsWith("[encoder] using"))).toBe(
      `[encoder] using ${describeBinaries(bin)}`,
    );
  });

  it("encodes a 16:9 source with audio: HLS ladder, MP4, poster and watermark", async () => {
    const { jobId, job, result, out } = await encode(sources.landscape, {
      enabledResolutions: ["240p", "360p", "720p"],
      mp4: true,
      watermark: { position: "bottom-right", opacity: 0.8 },
    });
    const r = ready(result);
    expect(r).toMatchObject({
      version: 1,
      jobId,
      attempt: 1,
      status: "ready",
      width: 640,
      height: 360,
      hasAudio: true,
      mp4: true,
      poster: "poster.jpg",
      renditions: [
        { resolution: "240p", width: 426, height: 240 },
        { resolution: "360p", width: 640, height: 360 },
      ],
    });
    expect(r.duration).toBeCloseTo(3, 1);
    expect(r.peakMemoryBytes).toBeGreaterThan(10 * 1024 * 1024);
    expect(r.files).toEqual(
      expect.arrayContaining([
        "master.m3u8",
        "240p/index.m3u8",
        "360p/index.m3u8",
        "240p/seg_00000.ts",
        "360p/seg_00000.ts",
        "video.mp4",
        "poster.jpg",
      ]),
    );
    expectWellBehaved(jobId, job, r);

    const master = await readFile(join(out, "master.m3u8"), "utf8");
    const lines = master.trim().split("\n");
    expect(lines[0]).toBe("#EXTM3U");
    const variants = lines.filter((line) => line.startsWith("#EXT-X-STREAM-INF:"));
    expect(variants).toHaveLength(2);
    expect(variants[0]).toMatch(
      /^#EXT-X-STREAM-INF:BANDWIDTH=\d+,.*RESOLUTION=426x240,CODECS="avc1\.64[0-9a-f]{4},mp4a\.40\.2"$/,
    );
    expect(variants[1]).toMatch(/RESOLUTION=640x360,CODECS="avc1\.64[0-9a-f]{4},mp4a\.40\.2"$/);
    expect(lines.filter((line) => !line.startsWith("#"))).toEqual(["240p/index.m3u8", "360p/index.m3u8"]);

    for (const rendition of r.renditions) {
      const playlist = await readFile(join(out, rendition.resolution, "index.m3u8"), "utf8");
      expect(playlist).toContain("#EXT-X-PLAYLIST-TYPE:VOD");
      expect(playlist.trim().endsWith("#EXT-X-ENDLIST")).toBe(true);
      const segments = playlist.split("\n").filter((line) => line && !line.startsWith("#"));
      for (const segment of segments) {
        expect(segment).toMatch(/^seg_\d{5}\.ts$/);
        expect(r.files).toContain(`${rendition.resolution}/${segment}`);
      }
      const { streams } = await ffprobeJson(bin.ffprobe, join(out, rendition.resolution, "seg_00000.ts"));
      const video = streams.find((s) => s.codec_type === "video");
      expect(video).toMatchObject({ codec_name: "h264", width: rendition.width, height: rendition.height });
      // 4:2:0 in limited range (yuvj420p would be full range).
      expect(video?.pix_fmt).toBe("yuv420p");
      expect(streams.filter((s) => s.codec_type === "audio").map((s) => s.codec_name)).toEqual(["aac"]);
    }

    // Keyframes at the same instants in every rendition.
    /** @param {string} resolution */
    const keyframes = async (resolution) => {
      const file = join(out, resolution, "seg_00000.ts");
      const { packets = [] } = await ffprobeJson(bin.ffprobe, file, [
        ...["-select_streams", "v:0", "-show_entries", "packet=pts_time,flags"],
      ]);
      return packets.filter((p) => p.flags?.startsWith("K")).map((p) => Number(p.pts_time).toFixed(2));
    };
    const low = await keyframes("240p");
    expect(low.length).toBeGreaterThanOrEqual(2);
    expect(await keyframes("360p")).toEqual(low);

    const mp4 = await readFile(join(out, "video.mp4"));
    expect(mp4.indexOf("moov")).toBeLessThan(mp4.indexOf("mdat"));
    const { streams: mp4Streams } = await ffprobeJson(bin.ffprobe, join(out, "video.mp4"));
    expect(mp4Streams.map((s) => [s.codec_name, s.width ?? null, s.height ?? null])).toEqual([
      ["h264", 640, 360],
      ["aac", null, null],
    ]);

    const poster = await readFile(join(out, "poster.jpg"));
    expect([...poster.subarray(0, 3)]).toEqual([0xff, 0xd8, 0xff]);
    const { streams: posterStreams } = await ffprobeJson(bin.ffprobe, join(out, "poster.jpg"));
    expect(posterStreams[0]).toMatchObject({ codec_name: "mjpeg", width: 640, height: 360 });

    // The red watermark: 96×48 (15% of 640), 13 px (2%) from the bottom and right edges, at 0.8.
    const [red, green, blue] = await averageColour(
      bin.ffmpeg,
      join(out, "poster.jpg"),
      { x: 640 - 13 - 96 + 8, y: 360 - 13 - 48 + 8, w: 80, h: 32 },
      join(scratch, "pixel.ppm"),
    );
    expect(red).toBeGreaterThan(190);
    expect(green).toBeLessThan(70);
    expect(blue).toBeLessThan(70);
  });

  it("encodes a 9:16 full-range source without MP4 or watermark: renditions labelled by width, limited range", async () => {
    const { jobId, job, result, out } = await encode(sources.portrait, {
      enabledResolutions: ["240p", "360p", "1080p"],
    });
    const r = ready(result);
    expect(r).toMatchObject({ width: 360, height: 640, mp4: false, hasAudio: true });
    expect(r.renditions).toEqual([
      { resolution: "240p", width: 240, height: 426 },
      { resolution: "360p", width: 360, height: 640 },
    ]);
    expect(r.files).not.toContain("video.mp4");
    expectWellBehaved(jobId, job, r);
    expect(await readFile(join(out, "master.m3u8"), "utf8")).toContain("RESOLUTION=240x426");
    const { streams: segment } = await ffprobeJson(bin.ffprobe, join(out, "360p/seg_00000.ts"));
    expect(segment[0]).toMatchObject({ codec_name: "h264", width: 360, height: 640, pix_fmt: "yuv420p" });
    const { streams } = await ffprobeJson(bin.ffprobe, join(out, "poster.jpg"));
    expect(streams[0]).toMatchObject({ width: 360, height: 640 });
  });

  it("gives a silent source no audio stream anywhere (and draws a WebP watermark top-left)", async () => {
    const { jobId, job, result, out } = await post(
      sources.silent,
      {
        enabledResolutions: ["240p"],
        mp4: true,
        watermark: { position: "top-left", opacity: 1 },
      },
      { watermark: sources.watermarkWebp },
    ).then(finished);
    const r = ready(result);
    expect(r.hasAudio).toBe(false);
    expect(r.renditions).toEqual([{ resolution: "180p", width: 320, height: 180 }]);
    expectWellBehaved(jobId, job, r);
    const master = await readFile(join(out, "master.m3u8"), "utf8");
    expect(master).toMatch(/CODECS="avc1\.64[0-9a-f]{4}"\n/);
    for (const file of ["180p/seg_00000.ts", "video.mp4"]) {
      const { streams } = await ffprobeJson(bin.ffprobe, join(out, file));
      expect(streams.map((s) => s.codec_type)).toEqual(["video"]);
    }
    // The blue watermark: 48×24 (15% of 320), 6 px (2%) from the top and left edges.
    const colour = await averageColour(
      bin.ffmpeg,
      join(out, "poster.jpg"),
      { x: 10, y: 10, w: 40, h: 16 },
      join(scratch, "p.ppm"),
    );
    expect(colour[2]).toBeGreaterThan(200);
    expect(Math.max(/** @type {number} */ (colour[0]), /** @type {number} */ (colour[1]))).toBeLessThan(60);
  });

  it("applies rotation metadata: a 320×180 stream rotated 90° is a 180×320 video", async () => {
    const { jobId, job, result, out } = await encode(sources.rotated, { enabledResolutions: ["360p"] });
    const r = ready(result);
    expect(r).toMatchObject({ width: 180, height: 320 });
    expect(r.renditions).toEqual([{ resolution: "180p", width: 180, height: 320 }]);
    expectWellBehaved(jobId, job, r);
    const { streams } = await ffprobeJson(bin.ffprobe, join(out, "180p/seg_00000.ts"));
    expect(streams[0]).toMatchObject({ codec_name: "h264", width: 180, height: 320 });
  });

  it.each(
    /** @type {const} */ ([
      ["zero bytes", "zero"],
      ["random bytes", "random"],
      ["audio only", "audioOnly"],
      ["an MP4 cut before its header", "truncated"],
      ["an MP4 cut after its header, before any frame", "headerOnly"],
    ]),
  )("reports invalid_source for %s, uploading nothing", async (_, name) => {
    const { job, result } = await encode(sources[name], { mp4: true });
    expect(result).toMatchObject({ status: "failed", code: "invalid_source" });
    expect(result.status === "failed" && result.message).toMatch(/^The source is not a decodable video: .+\.$/);
    expect(job.uploads).toEqual([]);
    expect(fake.problems).toEqual([]);
  });

  it("reports encoding_failed when the Worker refuses an output, and sends nothing after the result", async () => {
    const { jobId, job, response } = await post(
      sources.silent,
      {},
      { onUpload: (path) => (path === "master.m3u8" ? 400 : undefined) },
    );
    expect(response.status).toBe(202);
    const result = await job.resultReceived;
    await waitUntilIdle();
    expect(result).toMatchObject({
      status: "failed",
      code: "encoding_failed",
      message: "The video could not be encoded.",
    });
    const mine = fake.calls.filter((call) => call.path.startsWith(`/jobs/${jobId}/`));
    expect(mine.at(-1)?.path).toBe(`/jobs/${jobId}/result`);
  });

  it("retries an upload the Worker answered with 503", async () => {
    let refused = 0;
    const onUpload = (/** @type {string} */ path) => (path === "master.m3u8" && refused++ === 0 ? 503 : undefined);
    const { jobId, job, result } = await finished(await post(sources.silent, {}, { onUpload }));
    expectWellBehaved(jobId, job, ready(result));
    const masterPuts = fake.calls.filter((call) => call.path === `/jobs/${jobId}/outputs/master.m3u8`);
    expect(masterPuts.map((call) => call.status)).toEqual([503, 201]);
  });

  it("stops without a word when the Worker answers a heartbeat with 410", async () => {
    const { jobId, job, response } = await post(sources.landscape, {}, { onHeartbeat: () => 410 });
    expect(response.status).toBe(202);
    await waitUntilIdle();
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(job.results).toEqual([]);
    expect(job.uploads).toEqual([]);
    expect(encoder.lines.some((line) => line.includes(`job ${jobId}#1 cancelled`))).toBe(true);
  });

  it("with ENCODER_TOKEN, refuses /v1 requests without it (but not /healthz)", async () => {
    const guarded = await startEncoder({ ENCODER_TMPDIR: join(dir, "tmp"), ENCODER_TOKEN: "encoder-secret" });
    try {
      const send = (/** @type {Record<string, string>} */ headers) =>
        fetch(`${guarded.origin}/v1/jobs`, {
          method: "POST",
          headers: { "content-type": "application/json", ...headers },
          body: "{}",
        });
      expect((await send({})).status).toBe(401);
      expect((await send({ authorization: "Bearer wrong" })).status).toBe(401);
      expect((await fetch(`${guarded.origin}/v1/jobs/x`, { method: "DELETE" })).status).toBe(401);
      expect((await fetch(`${guarded.origin}/v1/jobs/x`)).status).toBe(401);
      expect((await send({ authorization: "Bearer encoder-secret" })).status).toBe(400);
      expect((await fetch(`${guarded.origin}/healthz`)).status).toBe(200);
    } finally {
      await guarded.stop();
    }
  });

  it("refuses a malformed job with 400, naming the field", async () => {
    const response = await fetch(`${encoder.origin}/v1/jobs`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        version: 1,
        jobId: "bad",
        attempt: 1,
        callback: { baseUrl: fake.origin, token: TOKEN },
        settings: { ...settingsOf(), enabledResolutions: ["4k"] },
      }),
    });
    expect(response.status).toBe(400);
    expect(await response.json()).toEqual({
      error: {
        code: "invalid_job",
        message: expect.stringContaining("settings.enabledResolutions.0"),
        path: "settings.enabledResolutions.0",
      },
    });
    const notJson = await fetch(`${encoder.origin}/v1/jobs`, {
      method: "POST",
      body: "{",
      headers: { "content-type": "application/json" },
    });
    expect(notJson.status).toBe(400);
    const wrongType = await fetch(`${encoder.origin}/v1/jobs`, {
      method: "POST",
      body: "{}",
      headers: { "content-type": "text/plain" },
    });
    expect(wrongType.status).toBe(415);
    expect((await fetch(`${encoder.origin}/v1/jobs`)).status).toBe(405);
    expect((await fetch(`${encoder.origin}/v1/nothing`)).status).toBe(404);
  });

  it("runs one job at a time (409 for the same job, 503 for another) and cancels: ffmpeg killed, nothing sent", async () => {
    const { jobId, job, response } = await post(sources.long, { enabledResolutions: ["240p", "360p"], mp4: true });
    expect(response.status).toBe(202);
    // Wait until ffmpeg runs.
    for (let i = 0; i < 200 && !job.heartbeats.some((h) => h.stage === "encoding"); i++) {
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    expect(encoder.children().length).toBeGreaterThan(0);

    const again = await post(sources.long);
    expect(again.response.status).toBe(503);
    expect(again.response.headers.get("retry-after")).toBe("30");
    const same = await fetch(`${encoder.origin}/v1/jobs`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        version: 1,
        jobId,
        attempt: 2,
        callback: { baseUrl: `${fake.origin}/jobs/${jobId}`, token: TOKEN },
        settings: settingsOf(),
      }),
    });
    expect(same.status).toBe(409);
    expect(await same.json()).toMatchObject({ error: { code: "job_running", jobId, attempt: 1 } });
    const status = await fetch(`${encoder.origin}/v1/jobs/${jobId}`);
    expect(await status.json()).toMatchObject({ version: 1, jobId, attempt: 1, stage: "encoding" });

    const cancelled = await fetch(`${encoder.origin}/v1/jobs/${jobId}`, { method: "DELETE" });
    expect(cancelled.status).toBe(204);
    expect(encoder.children()).toEqual([]);
    expect((await fetch(`${encoder.origin}/v1/jobs/${jobId}`)).status).toBe(404);
    expect((await fetch(`${encoder.origin}/v1/jobs/${jobId}`, { method: "DELETE" })).status).toBe(404);
    await waitUntilIdle();
    const heartbeats = job.heartbeats.length;
    await new Promise((resolve) => setTimeout(resolve, 600));
    expect(job.heartbeats.length).toBe(heartbeats);
    expect(job.uploads).toEqual([]);
    expect(job.results).toEqual([]);
  });
  it("on SIGTERM interrupts its job, reports it encoding_failed so the Worker retries, and exits", async () => {
    const second = await startEncoder({ ENCODER_TMPDIR: join(dir, "tmp") });
    try {
      const jobId = `job-${++jobCount}`;
      const { job, callback } = fake.addJob(jobId, { source: sources.long });
      const response = await fetch(`${second.origin}/v1/jobs`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ version: 1, jobId, attempt: 3, callback, settings: settingsOf() }),
      });
      expect(response.status).toBe(202);
      for (let i = 0; i < 200 && !job.heartbeats.some((h) => h.stage === "encoding"); i++) {
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
      process.kill(second.pid, "SIGTERM");
      expect(await job.resultReceived).toMatchObject({ status: "failed", code: "encoding_failed", attempt: 3 });
      expect(await second.exited).toEqual({ code: 0, signal: null });
      expect(job.uploads).toEqual([]);
      expect(await readdir(join(dir, "tmp"))).toEqual([]);
    } finally {
      await second.stop();
    }
  });
});
