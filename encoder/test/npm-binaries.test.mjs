// @ts-check
// The encoder with the ffmpeg and ffprobe that npm packages ship (the local development path),
// found when neither is on the PATH: an old static ffmpeg 4.1 that must still do everything.

import { mkdir, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { locateBinaries, resolveBinaries } from "../binaries.mjs";
import { startEncoder } from "./encoder-process.mjs";
import { startFakeWorker } from "./fake-worker.mjs";
import { ffprobeJson, makeClip, makeWatermark } from "./media.mjs";

/** @typedef {import("../binaries.mjs").Binaries} Binaries */

// No ffmpeg on this PATH: only the packaged binaries can be found.
const NO_PATH = { PATH: "/nonexistent", FFMPEG_PATH: "", FFPROBE_PATH: "" };
const located = await locateBinaries(NO_PATH);
const packaged = located.ffmpeg?.from === "npm" && located.ffprobe?.from === "npm";
const binaries = packaged ? await resolveBinaries(NO_PATH) : null;
if (!binaries) {
  console.warn(
    "npm-packaged ffmpeg test skipped: @ffmpeg-installer/ffmpeg or @ffprobe-installer/ffprobe is not installed",
  );
}

describe.skipIf(!binaries)("encoder with the npm-packaged ffmpeg and ffprobe", () => {
  const bin = /** @type {Binaries} */ (binaries);
  /** @type {string} */ let dir;
  /** @type {Awaited<ReturnType<typeof startFakeWorker>>} */ let fake;
  /** @type {Awaited<ReturnType<typeof startEncoder>>} */ let encoder;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "encoder-npm-test-"));
    await mkdir(join(dir, "tmp"));
    fake = await startFakeWorker(join(dir, "received"));
    encoder = await startEncoder({ ...NO_PATH, ENCODER_TMPDIR: join(dir, "tmp") });
  });

  afterAll(async () => {
    await encoder?.stop();
    await fake?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it("logs the packaged binaries and encodes HLS, MP4, poster and watermark with them", async () => {
    expect(encoder.lines.find((line) => line.startsWith("[encoder] using"))).toMatch(
      /^\[encoder\] using ffmpeg \S+ at \S+@ffmpeg-installer\S+ \(from npm\); ffprobe \S+ at \S+@ffprobe-installer\S+ \(from npm\)$/,
    );
    const source = await makeClip(bin.ffmpeg, join(dir, "source.mp4"), { width: 640, height: 360, seconds: 2 });
    const watermark = await makeWatermark(bin.ffmpeg, join(dir, "mark.webp"), "blue");
    const { job, callback } = fake.addJob("npm-1", { source, watermark });
    const response = await fetch(`${encoder.origin}/v1/jobs`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        version: 1,
        jobId: "npm-1",
        attempt: 1,
        callback,
        settings: { enabledResolutions: ["240p", "360p"], mp4: true, watermark: { position: "center", opacity: 0.5 } },
      }),
    });
    expect(response.status).toBe(202);
    const result = await job.resultReceived;
    expect(result).toMatchObject({
      status: "ready",
      width: 640,
      height: 360,
      hasAudio: true,
      mp4: true,
      renditions: [
        { resolution: "240p", width: 426, height: 240 },
        { resolution: "360p", width: 640, height: 360 },
      ],
    });
    expect(fake.problems).toEqual([]);
    const out = join(dir, "received", "npm-1");
    const { streams } = await ffprobeJson(bin.ffprobe, join(out, "360p/seg_00000.ts"));
    expect(streams.map((s) => [s.codec_name, s.width ?? null])).toEqual([
      ["h264", 640],
      ["aac", null],
    ]);
    const { streams: poster } = await ffprobeJson(bin.ffprobe, join(out, "poster.jpg"));
    expect(poster[0]).toMatchObject({ codec_name: "mjpeg", width: 640, height: 360 });
  });
});
