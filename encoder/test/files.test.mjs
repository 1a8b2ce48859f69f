// @ts-check
// The parts of the MP4 and the M4A (encoder/files.mjs) with real ffmpeg and a fake callback
// client: MPEG-TS segments in (each with its continuity counters from zero, as separate runs make
// them), the file out a part per job as the Worker asks for them (the first part measures, every
// other follows in turn, the first is written last with the index of the others), every part but
// the last exactly `partSize` bytes, and the whole one file a player reads from its start.

import { createReadStream } from "node:fs";
import { mkdtemp, readdir, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { planEncoding, segmentCount } from "../../media-plan/plan.mjs";
import { resolveBinaries, runBinary } from "../binaries.mjs";
import { runFilePart } from "../files.mjs";
import { makeFileParts } from "./file-parts.mjs";
import { ffprobeJson } from "./media.mjs";

/** @typedef {import("../../media-plan/protocol.mjs").FileJob} FileJob */
/** @typedef {import("../../media-plan/protocol.mjs").FilePart} FilePart */
/** @typedef {import("../../media-plan/protocol.mjs").Fragment} Fragment */

const binaries = await resolveBinaries().catch((error) => {
  throw new Error(`the encoder's tests need ffmpeg and ffprobe, and none could be found: ${error.message}`);
});

const SECONDS = 22;
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
  { enabledResolutions: ["240p", "360p"], mp4: true, watermark: null },
);

describe("a file's parts", () => {
  /** @type {string} */ let dir;
  /** @type {string[]} */ let segments;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "files-test-"));
    // The plan's segments of 4 s, H.264 (with B-frames) and AAC in MPEG-TS, each segment written
    // by its own muxer.
    const made = await runBinary(
      binaries.ffmpeg,
      [
        ...["-hide_banner", "-v", "error", "-f", "lavfi", "-i", `testsrc2=s=640x360:r=25:d=${SECONDS}`],
        ...["-f", "lavfi", "-i", `sine=f=440:d=${SECONDS}:sample_rate=48000`],
        ...["-c:v", "libx264", "-preset", "ultrafast", "-bf", "2", "-g", "50", "-c:a", "aac", "-ac", "2"],
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
   * A callback client that serves the segments from disk, keeps the parts it is sent, and serves
   * the index it is given.
   * @param {{ failAt?: number }} [options]
   */
  function fakeClient(options = {}) {
    /** @type {string[]} */
    const read = [];
    /** @type {Map<number, Buffer>} */
    const sent = new Map();
    /** @type {Fragment[]} */
    const index = [];
    const client = {
      /** @param {string} resolution @param {number} index */
      async getSegment(resolution, index) {
        read.push(`${resolution}/${index}`);
        if (index === options.failAt) throw new Error("GET /segments: 404");
        return createReadStream(join(dir, /** @type {string} */ (segments[index])));
      },
      /** @param {number} partNumber @param {Buffer} bytes */
      async putPart(partNumber, bytes) {
        sent.set(partNumber, Buffer.from(bytes));
        return `etag-${partNumber}`;
      },
      async getIndex() {
        return index;
      },
    };
    return {
      client: /** @type {import("../callback.mjs").CallbackClient} */ (/** @type {unknown} */ (client)),
      read,
      sent,
      index,
    };
  }

  /**
   * Makes the whole file as the Worker would ask for it, a part per job (`makeFileParts`).
   * @param {"mp4" | "m4a"} kind @param {number} partSize @param {ReturnType<typeof fakeClient>} fake
   */
  async function makeFile(kind, partSize, fake) {
    const callback = { baseUrl: "http://worker.test/jobs/a", token: "t".repeat(32) };
    const base = { version: 2, jobId: "a-1", priority: "background", callback, kind, plan, partSize };
    const { made, parts } = await makeFileParts(segmentCount(plan), (step, index) => {
      fake.index.splice(0, fake.index.length, ...index);
      return runFilePart({
        job: /** @type {FileJob} */ ({ ...base, ...step }),
        client: fake.client,
        binaries,
        signal: new AbortController().signal,
        onProgress: () => {},
      });
    });
    const numbers = [...fake.sent.keys()].sort((a, b) => a - b);
    expect(numbers).toEqual(parts.map((part) => part.part));
    const bytes = Buffer.concat(numbers.map((n) => /** @type {Buffer} */ (fake.sent.get(n))));
    const file = join(dir, `whole.${kind}`);
    await writeFile(file, bytes);
    return { made, parts: numbers.map((n) => /** @type {Buffer} */ (fake.sent.get(n))), bytes, file };
  }

  /** The file's top-level boxes, in order. @param {Buffer} bytes */
  function topBoxes(bytes) {
    const boxes = [];
    for (let at = 0; at < bytes.length; at += bytes.readUInt32BE(at))
      boxes.push(bytes.toString("latin1", at + 4, at + 8));
    return boxes;
  }

  /** Each stream's packet times (seconds) and durations, as ffprobe reads the file. @param {string} file */
  async function packets(file) {
    const { packets: all = [] } = /** @type {{ packets?: { stream_index: number, pts_time: string }[] }} */ (
      await ffprobeJson(binaries.ffprobe, file, ["-show_entries", "packet=stream_index,pts_time"])
    );
    return [0, 1].map((index) => all.filter((p) => p.stream_index === index).map((p) => Number(p.pts_time)));
  }

  /**
   * How many fragments ffprobe reads to open the file and learn its duration (each `moof` box it
   * reads is logged at the trace level). A file whose index spans it whole needs none past the
   * first: one whose index ends short of the file is read fragment by fragment to find the rest,
   * which over HTTP is a request per fragment.
   * @param {string} file
   */
  async function fragmentsReadToOpen(file) {
    const probed = await runBinary(binaries.ffprobe, ["-v", "trace", "-show_entries", "format=duration", file]);
    if (probed.code !== 0) throw new Error(`ffprobe: ${probed.stderr.slice(-500)}`);
    return probed.stderr.split("\n").filter((line) => line.includes("type:'moof'")).length;
  }

  it("puts the MP4 together a part per job, its index first, every part but the last partSize bytes, one continuous time line", async () => {
    expect(segments).toHaveLength(segmentCount(plan));
    const fake = fakeClient();
    // About two segments a part (a segment of this source is about 900 kB).
    const partSize = 2 * 1024 * 1024;
    const { made, parts, bytes, file } = await makeFile("mp4", partSize, fake);
    expect(made.length).toBeGreaterThan(3);
    for (const part of parts.slice(0, -1)) expect(part.length).toBe(partSize);
    // The index first: a reader finds the duration and every fragment from the start alone.
    expect(topBoxes(bytes).slice(0, 5)).toEqual(["ftyp", "moov", "sidx", "sidx", "moof"]);
    // Each part after its fragments is padded with a free box, which readers skip.
    expect(topBoxes(bytes)).toContain("free");
    const { streams } = await ffprobeJson(binaries.ffprobe, file);
    expect(streams.map((s) => [s.codec_name, s.width ?? null])).toEqual([
      ["h264", 640],
      ["aac", null],
    ]);
    const format = /** @type {{ format: { duration: string } }} */ (
      /** @type {unknown} */ (await ffprobeJson(binaries.ffprobe, file, ["-show_format"]))
    );
    expect(Number(format.format.duration)).toBeCloseTo(SECONDS, 0);
    // The index spans the whole file, the first part's padding too: opening it reads no fragment
    // but the first.
    expect(await fragmentsReadToOpen(file)).toBeLessThanOrEqual(1);
    // One time line across the parts: a frame every 40 ms, the audio a packet every 1024 samples.
    const [video = [], audio = []] = await packets(file);
    const frames = [...video].sort((a, b) => a - b);
    expect(frames).toHaveLength(SECONDS * 25);
    const steps = (/** @type {number[]} */ times) => times.slice(1).map((time, i) => time - (times[i] ?? 0));
    for (const step of steps(frames)) expect(step).toBeCloseTo(0.04, 3);
    for (const step of steps(audio)) expect(step).toBeCloseTo(1024 / 48000, 4);
    expect(Math.abs((audio[0] ?? 0) - (frames[0] ?? 0))).toBeLessThan(0.1);
    // Each part's fragments numbered on from the one before.
    expect(made.slice(1, -1).every((part) => part.origin === made[0]?.origin)).toBe(true);
    // Every frame decodes.
    const decoded = await runBinary(binaries.ffmpeg, ["-v", "error", "-i", file, "-f", "null", "-"]);
    expect(decoded.stderr).toBe("");
  });

  it("puts the M4A together from the lowest rendition's audio, a part per job, with its index first", async () => {
    const fake = fakeClient();
    const partSize = 128 * 1024;
    const { made, parts, bytes, file } = await makeFile("m4a", partSize, fake);
    expect(made.length).toBeGreaterThan(2);
    expect(fake.read.every((segment) => segment.startsWith("240p/"))).toBe(true);
    for (const part of parts.slice(0, -1)) expect(part.length).toBe(partSize);
    expect(bytes.toString("latin1", 8, 12)).toBe("M4A ");
    expect(topBoxes(bytes).slice(0, 4)).toEqual(["ftyp", "moov", "sidx", "moof"]);
    const { streams } = await ffprobeJson(binaries.ffprobe, file);
    expect(streams.map((s) => [s.codec_type, s.codec_name, s.channels])).toEqual([["audio", "aac", 2]]);
    const format = /** @type {{ format: { duration: string } }} */ (
      /** @type {unknown} */ (await ffprobeJson(binaries.ffprobe, file, ["-show_format"]))
    );
    expect(Math.abs(Number(format.format.duration) - SECONDS)).toBeLessThanOrEqual(0.1);
    expect(await fragmentsReadToOpen(file)).toBeLessThanOrEqual(1);
    const [audio = []] = await packets(file);
    for (const [i, time] of audio.slice(1).entries()) expect(time - (audio[i] ?? 0)).toBeCloseTo(1024 / 48000, 4);
  });

  it("holds the whole file in its first part when it fits, written at once", async () => {
    const fake = fakeClient();
    const { made, parts } = await makeFile("m4a", 5 * 1024 * 1024, fake);
    expect(made).toMatchObject([{ to: segmentCount(plan), etag: "etag-1" }]);
    expect(parts).toHaveLength(1);
  });

  it("fails when a segment cannot be read, sending nothing", async () => {
    const fake = fakeClient({ failAt: 1 });
    await expect(makeFile("m4a", 5 * 1024 * 1024, fake)).rejects.toThrow("404");
    expect(fake.sent.size).toBe(0);
  });
});
