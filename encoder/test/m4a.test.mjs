// @ts-check
// The M4A job's work (encoder/m4a.mjs) with real ffmpeg and a fake callback client: MPEG-TS
// segments in (each with its continuity counters from zero, as separate runs make them), an
// audio-only M4A out, sent in parts of exactly `partSize` bytes but the last.

import { createReadStream } from "node:fs";
import { mkdtemp, readdir, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { planEncoding, segmentCount } from "../../media-plan/plan.mjs";
import { resolveBinaries, runBinary } from "../binaries.mjs";
import { runM4a } from "../m4a.mjs";
import { ffprobeJson } from "./media.mjs";

/** @typedef {import("../../media-plan/protocol.mjs").M4aJob} M4aJob */

const binaries = await resolveBinaries().catch((error) => {
  throw new Error(`the encoder's tests need ffmpeg and ffprobe, and none could be found: ${error.message}`);
});

const SECONDS = 10;
const plan = planEncoding(
  {
    format: "mov",
    duration: SECONDS,
    startTime: 0,
    width: 640,
    height: 360,
    frameRate: 25,
    videoStream: 0,
    audioStream: 1,
    interlaced: false,
  },
  { enabledResolutions: ["240p", "360p"], mp4: false, watermark: null },
);

describe("the M4A job's remux", () => {
  /** @type {string} */ let dir;
  /** @type {string[]} */ let segments;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "m4a-test-"));
    // The plan's segments of 4 s, H.264 and AAC in MPEG-TS, each written by its own muxer.
    const made = await runBinary(
      binaries.ffmpeg,
      [
        ...["-hide_banner", "-v", "error", "-f", "lavfi", "-i", `testsrc2=s=320x180:r=25:d=${SECONDS}`],
        ...["-f", "lavfi", "-i", `sine=f=440:d=${SECONDS}:sample_rate=48000`],
        ...["-c:v", "libx264", "-preset", "ultrafast", "-g", "50", "-c:a", "aac", "-ac", "2", "-b:a", "128k"],
        ...["-f", "segment", "-segment_time", "4", "-segment_format", "mpegts", join(dir, "seg_%05d.ts")],
      ],
      { timeoutMs: 60_000 },
    );
    if (made.code !== 0) throw new Error(`ffmpeg: ${made.stderr}`);
    segments = (await readdir(dir)).filter((name) => name.endsWith(".ts")).sort();
  });

  afterAll(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  /**
   * A callback client that serves the segments from disk and keeps the parts it is sent.
   * @param {{ failAt?: number }} [options]
   */
  function fakeClient(options = {}) {
    /** @type {string[]} */
    const read = [];
    /** @type {{ partNumber: number, bytes: Buffer, file: string | undefined }[]} */
    const sent = [];
    const client = {
      /** @param {string} resolution @param {number} index */
      async getSegment(resolution, index) {
        read.push(`${resolution}/${index}`);
        if (index === options.failAt) throw new Error("GET /segments: 404");
        return createReadStream(join(dir, /** @type {string} */ (segments[index])));
      },
      /** @param {number} partNumber @param {Buffer} bytes @param {string} [file] */
      async putPart(partNumber, bytes, file) {
        sent.push({ partNumber, bytes: Buffer.from(bytes), file });
        return `etag-${partNumber}`;
      },
    };
    return {
      client: /** @type {import("../callback.mjs").CallbackClient} */ (/** @type {unknown} */ (client)),
      read,
      sent,
    };
  }

  /** @param {number} partSize @returns {M4aJob} */
  function job(partSize) {
    const callback = { baseUrl: "http://worker.test/jobs/a", token: "t".repeat(32) };
    return { version: 2, jobId: "a-1", priority: "background", callback, kind: "m4a", plan, partSize };
  }

  it("copies the lowest rendition's audio into an M4A with its moov first, in parts of partSize bytes", async () => {
    expect(segments).toHaveLength(segmentCount(plan));
    const { client, read, sent } = fakeClient();
    const work = await mkdtemp(join(dir, "job-"));
    /** @type {number[]} */
    const progress = [];
    const result = await runM4a({
      job: job(16 * 1024),
      client,
      binaries,
      signal: new AbortController().signal,
      dir: work,
      onProgress: (fraction) => progress.push(fraction),
    });
    expect(read).toEqual(segments.map((_, index) => `240p/${index}`));
    expect(sent.every((part) => part.file === "m4a")).toBe(true);
    expect(result.parts).toEqual(
      sent.map((part) => ({ partNumber: part.partNumber, etag: `etag-${part.partNumber}` })),
    );
    expect(sent.map((part) => part.partNumber)).toEqual(sent.map((_, i) => i + 1));
    expect(sent.length).toBeGreaterThan(1);
    for (const part of sent.slice(0, -1)) expect(part.bytes.length).toBe(16 * 1024);
    const whole = Buffer.concat(sent.map((part) => part.bytes));
    expect(whole.length).toBe(result.bytes);
    expect(whole.toString("latin1", 4, 12)).toBe("ftypM4A ");
    expect(whole.indexOf("moov")).toBeLessThan(whole.indexOf("mdat"));
    expect(progress.at(-1)).toBe(1);

    const file = join(dir, "whole.m4a");
    await writeFile(file, whole);
    const { streams } = await ffprobeJson(binaries.ffprobe, file);
    expect(streams.map((s) => [s.codec_type, s.codec_name, s.channels])).toEqual([["audio", "aac", 2]]);
    const { format } = /** @type {{ format: { duration: string } }} */ (
      /** @type {unknown} */ (await ffprobeJson(binaries.ffprobe, file, ["-show_format"]))
    );
    expect(Math.abs(Number(format.duration) - SECONDS)).toBeLessThanOrEqual(0.1);
  });

  it("fails when a segment cannot be read, sending nothing", async () => {
    const { client, sent } = fakeClient({ failAt: 1 });
    const work = await mkdtemp(join(dir, "job-"));
    await expect(
      runM4a({
        job: job(5 * 1024 * 1024),
        client,
        binaries,
        signal: new AbortController().signal,
        dir: work,
        onProgress: () => {},
      }),
    ).rejects.toThrow("404");
    expect(sent).toEqual([]);
  });
});
