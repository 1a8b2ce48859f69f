// @ts-check
// The encoder with the ffmpeg and ffprobe that npm packages ship (the local development path),
// found when neither is on the PATH: one static build from 2018, both binaries of it, which must
// still do everything (without the priming drop and tpad, which that build lacks).

import { mkdir, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { planEncoding } from "../../media-plan/plan.mjs";
import { locateBinaries, onPath, resolveBinaries } from "../binaries.mjs";
import { startEncoder } from "./encoder-process.mjs";
import { startFakeWorker } from "./fake-worker.mjs";
import { ffprobeJson, makeClip, makeHostileSources, makeWatermark } from "./media.mjs";

/** @typedef {import("../binaries.mjs").Binaries} Binaries */

// No ffmpeg on this PATH: only the packaged binaries can be found.
const NO_PATH = { PATH: "/nonexistent", FFMPEG_PATH: "", FFPROBE_PATH: "" };
const TOKEN = "npm-encoder-token-0123456789abcdef";
const located = await locateBinaries(NO_PATH);
const packaged = located.ffmpeg?.from === "npm" && located.ffprobe?.from === "npm";
// Missing packages are a failure, never a skip: they are what `npm run dev` runs on a machine
// without ffmpeg (package.json installs them on linux-x64, the project's machines).
if (!packaged) {
  throw new Error(
    "@ffmpeg-installer/linux-x64 and @ffprobe-installer/linux-x64 must be installed (npm ci): the local encoder's ffmpeg",
  );
}
const binaries = await resolveBinaries(NO_PATH);

describe("encoder with the npm-packaged ffmpeg and ffprobe", () => {
  const bin = /** @type {Binaries} */ (binaries);
  /** @type {string} */ let dir;
  /** @type {Awaited<ReturnType<typeof startFakeWorker>>} */ let fake;
  /** @type {Awaited<ReturnType<typeof startEncoder>>} */ let encoder;
  let jobs = 0;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "encoder-npm-test-"));
    await mkdir(join(dir, "tmp"));
    fake = await startFakeWorker(join(dir, "received"));
    encoder = await startEncoder({ ...NO_PATH, ENCODER_TMPDIR: join(dir, "tmp"), ENCODER_TOKEN: TOKEN });
  });

  afterAll(async () => {
    await encoder?.stop();
    await fake?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  /** @param {Buffer} source @param {Record<string, unknown>} job @param {Buffer | null} [watermark] */
  async function run(source, job, watermark = null) {
    const jobId = `npm-${++jobs}`;
    const { job: fakeJob, callback } = fake.addJob(jobId, { source, watermark, video: "npm" });
    const response = await fetch(`${encoder.origin}/v2/jobs`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${TOKEN}` },
      body: JSON.stringify({ version: 2, jobId, priority: "interactive", callback, ...job }),
    });
    expect(response.status).toBe(202);
    return { jobId, result: await fakeJob.resultReceived };
  }

  it("is one build, says what it lacks, and encodes segments, a still, the storyboard, the MP4 and the M4A with it", async () => {
    expect(bin.ffmpeg.version).toBe(bin.ffprobe.version);
    expect(encoder.lines.find((line) => line.startsWith("[encoder] using"))).toMatch(
      /^\[encoder\] using ffmpeg \S+ at \S+@ffmpeg-installer\S+ \(from npm\); ffprobe \S+ at \S+@ffprobe-installer\S+ \(from npm\)/,
    );
    const source = await makeClip(bin.ffmpeg, join(dir, "source.mp4"), { width: 640, height: 360, seconds: 6 });
    const watermark = await makeWatermark(bin.ffmpeg, join(dir, "mark.webp"), "blue");
    const probed = await run(source, { kind: "probe" });
    if (probed.result.status !== "done" || !probed.result.probe) throw new Error(JSON.stringify(probed.result));
    const plan = planEncoding(probed.result.probe, {
      enabledResolutions: ["240p", "360p"],
      mp4: true,
      watermark: { position: "center", opacity: 0.5 },
    });
    const renditions = plan.renditions.map((r) => r.resolution);
    expect((await run(source, { kind: "segments", plan, from: 0, to: 2, renditions }, watermark)).result).toMatchObject(
      {
        status: "done",
      },
    );
    const { streams } = await ffprobeJson(bin.ffprobe, fake.file("npm", "segments/360p/seg_00001.ts"));
    expect(streams.map((s) => [s.codec_name, s.width ?? null])).toEqual([
      ["h264", 640],
      ["aac", null],
    ]);
    const still = await run(source, { kind: "still", plan, time: 1, width: null }, watermark);
    const { streams: poster } = await ffprobeJson(bin.ffprobe, fake.file("npm", `still-${still.jobId}.jpg`));
    expect(poster[0]).toMatchObject({ codec_name: "mjpeg", width: 640, height: 360 });
    const tiles = await run(source, { kind: "tiles", plan, from: 0, to: 1 }, watermark);
    expect(tiles.result).toMatchObject({ status: "done" });
    const board = await run(source, { kind: "storyboard", plan }, watermark);
    expect(board.result).toMatchObject({ status: "done" });
    const { streams: sprite } = await ffprobeJson(bin.ffprobe, fake.file("npm", `still-${board.jobId}.jpg`));
    expect(sprite[0]).toMatchObject({ codec_name: "mjpeg", width: 240, height: 136 });
    const first = { partSize: 5 * 1024 * 1024, part: 1, from: 0, to: null, sequence: 1, origin: null };
    const mp4 = await run(source, { kind: "mp4", plan, ...first });
    expect(mp4.result).toMatchObject({ status: "done", mp4: { to: 2, etag: expect.any(String) } });
    const m4a = await run(source, { kind: "m4a", plan, ...first });
    expect(m4a.result).toMatchObject({ status: "done", m4a: { to: 2, etag: expect.any(String) } });
  });

  it("refuses the polyglot that made the mismatched pair read a local file", async () => {
    const { polyglot } = await makeHostileSources(bin, dir);
    const { result } = await run(polyglot, { kind: "probe" });
    expect(result).toMatchObject({ status: "failed", code: "invalid_source" });
  });

  it("will not run an ffmpeg and an ffprobe of different builds", async () => {
    const system = onPath("ffprobe", process.env.PATH);
    if (!system || !located.ffmpeg) return;
    await expect(
      resolveBinaries({ ...NO_PATH, FFMPEG_PATH: located.ffmpeg.path, FFPROBE_PATH: system }),
    ).rejects.toThrow(/not one build/);
  });
});
