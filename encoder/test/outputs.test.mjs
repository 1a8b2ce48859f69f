// @ts-check
// What the encoder (node encoder/server.mjs, real ffmpeg) makes, against a fake Worker: tiny
// sources in, segments, pictures and files out, checked with ffprobe frame by frame.

import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { storyboard } from "../../media-plan/pictures.mjs";
import {
  AUDIO_FRAME,
  AUDIO_RATE,
  firstAudioPacket,
  frameTime,
  segmentCount,
  segmentFrames,
  segmentSeconds,
  TIMESTAMP_BASE_SECONDS,
} from "../../media-plan/plan.mjs";
import { MAX_REQUEST_BYTES, segmentName } from "../../media-plan/protocol.mjs";
import { describeBinaries, runBinary } from "../binaries.mjs";
import { tracksOf } from "../mp4-index.mjs";
import { checkSegment } from "../segments.mjs";
import { binaries, encoderHarness } from "./harness.mjs";
import { averageColour, ffprobeJson, makeClip } from "./media.mjs";

describe(`the encoder's outputs (${describeBinaries(binaries)})`, () => {
  const bin = binaries;
  const h = encoderHarness();
  const { run, planOf, segments } = h;

  /** First timestamps, per stream type, of a stored segment; and its audio packets. @param {string} file */
  async function timestamps(file) {
    const { packets = [] } =
      /** @type {{ packets?: { codec_type?: string, pts_time?: string, duration_time?: string, stream_index?: number }[] }} */ (
        await ffprobeJson(bin.ffprobe, file, [
          ...["-f", "mpegts", "-show_entries", "packet=stream_index,pts_time,duration_time", "-show_streams"],
        ])
      );
    // Read as the MPEG-TS they are (a segment of two tiny frames is too short for ffprobe to tell).
    const { streams } = await ffprobeJson(bin.ffprobe, file, ["-f", "mpegts", "-show_streams"]);
    const typeOf = (/** @type {number | undefined} */ index) => streams.find((s) => s.index === index)?.codec_type;
    const video = packets.filter((p) => typeOf(p.stream_index) === "video").map((p) => Number(p.pts_time));
    const audio = packets.filter((p) => typeOf(p.stream_index) === "audio").map((p) => Number(p.pts_time));
    return { video: Math.min(...video), audio, frames: video.length };
  }

  it("makes segments of a run at the plan's size and range, H.264 and AAC, each sent as it is made", async () => {
    const plan = await planOf(h.sources.landscape, {
      enabledResolutions: ["240p", "360p"],
      mp4: false,
      watermark: { position: "bottom-right", opacity: 0.8 },
    });
    expect(segmentCount(plan)).toBe(1);
    const { job, result } = await segments(h.sources.landscape, plan, 0, 1, "landscape");
    expect(result).toEqual({ version: 2, jobId: expect.any(String), status: "done" });
    expect(job.stored.sort()).toEqual(["segments/240p/seg_00000.ts", "segments/360p/seg_00000.ts"]);
    expect(h.fake.problems).toEqual([]);
    for (const r of plan.renditions) {
      const file = h.fake.file("landscape", `segments/${r.resolution}/seg_00000.ts`);
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
    const frame = join(h.scratch, "frame.png");
    const [red, green, blue] = await averageColour(
      bin.ffmpeg,
      h.fake.file("landscape", "segments/360p/seg_00000.ts"),
      { x: 640 - 13 - 96 + 8, y: 360 - 13 - 48 + 8, w: 80, h: 32 },
      frame.replace(".png", ".ppm"),
    );
    expect(red).toBeGreaterThan(180);
    expect(Math.max(/** @type {number} */ (green), /** @type {number} */ (blue))).toBeLessThan(80);
  });

  it("lands a segment on the same frames and timestamps whichever run makes it, and audio joins without gap or overlap", async () => {
    const plan = await planOf(h.sources.long, { enabledResolutions: ["240p"], mp4: false, watermark: null });
    const count = segmentCount(plan);
    expect(count).toBe(3);
    // One run over everything, and each segment alone.
    await segments(h.sources.long, plan, 0, count, "whole");
    for (let i = 0; i < count; i++) await segments(h.sources.long, plan, i, i + 1, "alone");
    const audioStep = AUDIO_FRAME / AUDIO_RATE;
    let listed = 0;
    let previousAudioEnd = null;
    for (let i = 0; i < count; i++) {
      const whole = await timestamps(h.fake.file("whole", `segments/240p/${segmentName(i)}`));
      const alone = await timestamps(h.fake.file("alone", `segments/240p/${segmentName(i)}`));
      expect(alone.video).toBeCloseTo(whole.video, 3);
      expect(alone.frames).toBe(whole.frames);
      expect(alone.frames).toBe(segmentFrames(plan, i).count);
      // Its first picture is where the durations listed before it end
      // (docs/encoding.md#long-videos-playable-in-seconds).
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
    const plan = await planOf(h.sources.long, { enabledResolutions: ["240p", "360p"], mp4: true, watermark: null });
    await segments(h.sources.long, plan, 0, segmentCount(plan), "mp4");
    const still = await run(
      h.sources.long,
      { kind: "still", plan, time: plan.posterTime, width: null },
      { video: "mp4" },
    );
    expect(still.result).toMatchObject({ status: "done" });
    const poster = h.fake.file("mp4", `still-${still.jobId}.jpg`);
    const { streams: posterStreams } = await ffprobeJson(bin.ffprobe, poster);
    expect(posterStreams[0]).toMatchObject({ codec_name: "mjpeg", width: 640, height: 360 });

    const partSize = 5 * 1024 * 1024;
    const { made, bytes } = await h.fileOf(h.sources.long, plan, "mp4", "mp4", partSize);
    // Under a part's size: the first part holds the whole file, written at once.
    expect(made).toMatchObject([{ to: segmentCount(plan), etag: expect.any(String) }]);
    const assembled = join(h.scratch, "assembled.mp4");
    await writeFile(assembled, bytes);
    expect(bytes.indexOf("moov")).toBeLessThan(bytes.indexOf("mdat"));
    // The index first (docs/encoding.md#long-videos-playable-in-seconds): ftyp, a moov with the
    // duration, a sidx of every fragment per track, then the fragments; a reader finds the duration
    // and any time from the start alone, and seeks anywhere with one more request.
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
      // From the track's first time (the audio starts with the video's first picture, after
      // the B-frames' delay) to the video's end.
      let end = Number(bytes.readBigUInt64BE(at + 20));
      for (let i = 0; i < moofs; i++) end += bytes.readUInt32BE(at + 40 + 12 * i + 4);
      expect(end / bytes.readUInt32BE(at + 16)).toBeCloseTo(plan.duration, 1);
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
    expect(Math.max(...h.fake.calls.map((call) => call.bytes))).toBeLessThanOrEqual(MAX_REQUEST_BYTES);

    // The M4A (docs/audio-only.md): the lowest rendition's AAC copied into an audio-only MP4 with
    // its moov and index first, the whole duration, sent as parts.
    const m4a = await h.fileOf(h.sources.long, plan, "m4a", "mp4", partSize);
    const audio = m4a.bytes;
    expect(audio.toString("latin1", 8, 12)).toBe("M4A ");
    expect(audio.indexOf("moov")).toBeLessThan(audio.indexOf("moof"));
    const audioFile = join(h.scratch, "assembled.m4a");
    await writeFile(audioFile, audio);
    const { streams: audioStreams } = await ffprobeJson(bin.ffprobe, audioFile);
    expect(audioStreams.map((s) => [s.codec_type, s.codec_name, s.channels])).toEqual([["audio", "aac", 2]]);
    const audioFormat = /** @type {{ format: { duration: string } }} */ (
      /** @type {unknown} */ (await ffprobeJson(bin.ffprobe, audioFile, ["-show_format"]))
    );
    expect(Math.abs(Number(audioFormat.format.duration) - plan.duration)).toBeLessThanOrEqual(0.1);
    // Read from the lowest rendition only.
    const read = h.fake.calls.filter((call) => call.path.startsWith(`/jobs/${m4a.jobIds.at(-1)}/segments/`));
    expect(read.length).toBeGreaterThan(0);
    expect(new Set(read.map((call) => call.path.split("/")[4]))).toEqual(new Set(["240p"]));
  });

  it("makes a still of any frame at any width, and the storyboard: a tile per cue from within it, in one sprite", async () => {
    // Red for 6 s, then blue: which half a picture shows says which time it was taken at.
    const halves = await makeClip(bin.ffmpeg, join(h.scratch, "halves.mp4"), {
      width: 640,
      height: 360,
      seconds: 12,
      extra: ["-vf", "drawbox=c=red:t=fill:enable='lt(t,6)',drawbox=c=blue:t=fill:enable='gte(t,6)'"],
    });
    const plan = await planOf(halves, { enabledResolutions: ["360p"], mp4: false, watermark: null });
    const colourOf = async (
      /** @type {string} */ file,
      /** @type {{ x: number, y: number, w: number, h: number }} */ area,
    ) => averageColour(bin.ffmpeg, file, area, join(h.scratch, "colour.ppm"));
    const isBlue = (/** @type {number[]} */ [r, , b]) => (b ?? 0) > 150 && (r ?? 0) < 100;
    const isRed = (/** @type {number[]} */ [r, , b]) => (r ?? 0) > 150 && (b ?? 0) < 100;

    const frame = await run(halves, { kind: "still", plan, time: 9, width: 100 }, { video: "frames" });
    expect(frame.result).toMatchObject({ status: "done" });
    const still = h.fake.file("frames", `still-${frame.jobId}.jpg`);
    expect((await ffprobeJson(bin.ffprobe, still)).streams[0]).toMatchObject({ width: 100, height: 56 });
    expect(isBlue(await colourOf(still, { x: 10, y: 10, w: 80, h: 36 }))).toBe(true);

    const board = storyboard(plan);
    expect(board).toMatchObject({ tileWidth: 240, tileHeight: 136, columns: 2, rows: 1 });
    // Each tile is stored as it is made (the frame it shows, at the tile width); the sprite reads
    // them back and tiles them.
    const made = await h.storyboardOf(halves, plan, "frames");
    expect(made.result).toMatchObject({ status: "done" });
    const tile = h.fake.file("frames", "tiles/1");
    expect((await ffprobeJson(bin.ffprobe, tile)).streams[0]).toMatchObject({ width: 240, height: 136 });
    const sprite = h.fake.file("frames", `still-${made.jobId}.jpg`);
    expect((await ffprobeJson(bin.ffprobe, sprite)).streams[0]).toMatchObject({
      codec_name: "mjpeg",
      width: 480,
      height: 136,
    });
    expect(isRed(await colourOf(sprite, { x: 20, y: 20, w: 200, h: 96 }))).toBe(true);
    expect(isBlue(await colourOf(sprite, { x: 260, y: 20, w: 200, h: 96 }))).toBe(true);
  });

  it("labels a 9:16 full-range source's renditions by width, in limited range", async () => {
    const plan = await planOf(h.sources.portrait, {
      enabledResolutions: ["240p", "360p", "1080p"],
      mp4: false,
      watermark: null,
    });
    expect(plan.renditions.map((r) => [r.resolution, r.width, r.height])).toEqual([
      ["240p", 240, 426],
      ["360p", 360, 640],
    ]);
    await segments(h.sources.portrait, plan, 0, 1, "portrait");
    const { streams } = await ffprobeJson(bin.ffprobe, h.fake.file("portrait", "segments/360p/seg_00000.ts"));
    expect(streams[0]).toMatchObject({ codec_name: "h264", width: 360, height: 640, pix_fmt: "yuv420p" });
  });

  it("gives a silent source no audio stream, and draws a WebP watermark top-left", async () => {
    const plan = await planOf(h.sources.silent, {
      enabledResolutions: ["240p"],
      mp4: false,
      watermark: { position: "top-left", opacity: 1 },
    });
    expect(plan.audio).toBe(false);
    expect(plan.renditions.map((r) => r.codecs)).toEqual([expect.stringMatching(/^avc1\.6400[0-9a-f]{2}$/)]);
    await segments(h.sources.silent, plan, 0, 1, "silent", { watermark: h.sources.watermarkWebp });
    const file = h.fake.file("silent", "segments/180p/seg_00000.ts");
    const { streams } = await ffprobeJson(bin.ffprobe, file);
    expect(streams.map((s) => s.codec_type)).toEqual(["video"]);
    // The blue watermark: 48×24 (15% of 320), 6 px (2%) from the top and left edges.
    const colour = await averageColour(bin.ffmpeg, file, { x: 10, y: 10, w: 40, h: 16 }, join(h.scratch, "p.ppm"));
    expect(colour[2]).toBeGreaterThan(180);
    expect(Math.max(/** @type {number} */ (colour[0]), /** @type {number} */ (colour[1]))).toBeLessThan(80);
  });

  it("applies rotation metadata, and encodes two frames at 1 fps", async () => {
    const rotated = await planOf(h.sources.rotated, { enabledResolutions: ["360p"], mp4: false, watermark: null });
    expect([rotated.width, rotated.height]).toEqual([180, 320]);
    await segments(h.sources.rotated, rotated, 0, 1, "rotated");
    const { streams } = await ffprobeJson(bin.ffprobe, h.fake.file("rotated", "segments/180p/seg_00000.ts"));
    expect(streams[0]).toMatchObject({ width: 180, height: 320 });

    const two = await planOf(h.sources.twoFrames, { enabledResolutions: ["240p"], mp4: false, watermark: null });
    const { result } = await segments(h.sources.twoFrames, two, 0, 1, "two");
    expect(result).toMatchObject({ status: "done" });
    const { frames } = await timestamps(h.fake.file("two", "segments/240p/seg_00000.ts"));
    expect(frames).toBe(2);
  });

  it.each([
    ["a test pattern, 320×240", "twoFrames", "240p"],
    // Its segment is nine MPEG-TS packets from the npm-packaged ffmpeg: read as MPEG-TS, not guessed.
    ["one colour, 640×360", "flatTwoFrames", "360p"],
  ])(
    "makes every output of two frames at 1 fps of %s: segments, the poster, the storyboard and the MP4 (either ffmpeg)",
    async (_name, name, rendition) => {
      const source = /** @type {Buffer} */ (h.sources[/** @type {"twoFrames" | "flatTwoFrames"} */ (name)]);
      const video = `two-all-${name}`;
      const plan = await planOf(source, { enabledResolutions: [rendition], mp4: true, watermark: null });
      const made = await segments(source, plan, 0, segmentCount(plan), video);
      expect(made.result).toMatchObject({ status: "done" });
      const { frames } = await timestamps(h.fake.file(video, `segments/${rendition}/seg_00000.ts`));
      expect(frames).toBe(2);
      const poster = await run(source, { kind: "still", plan, time: plan.posterTime, width: null }, { video });
      expect(poster.result).toMatchObject({ status: "done" });
      const board = await h.storyboardOf(source, plan, video);
      expect(board.result).toMatchObject({ status: "done" });
      const mp4 = await h.fileOf(source, plan, "mp4", video, 5 * 1024 * 1024);
      expect(mp4.made).toMatchObject([{ to: 1, etag: expect.any(String) }]);
    },
  );

  it("reads a segment as the MPEG-TS it is: nine packets, which a reader guessing the format takes for MPEG-PS", async () => {
    // Two frames of one colour, with the tables written once (as the npm-packaged ffmpeg does in
    // a segment of two frames at 1 fps): nine 188-byte packets.
    const file = join(h.scratch, "nine-packets.ts");
    const made = await runBinary(bin.ffmpeg, [
      ...["-hide_banner", "-v", "error", "-y", "-f", "lavfi", "-i", "color=c=blue:s=640x360:r=1:d=2"],
      ...["-c:v", "libx264", "-preset", "veryfast", "-pat_period", "60", "-sdt_period", "60", "-f", "mpegts", file],
    ]);
    expect(made.code).toBe(0);
    expect((await readFile(file)).length).toBe(9 * 188);
    const rendition = {
      resolution: "360p",
      width: 640,
      height: 360,
      maxrateKbps: 800,
      level: 30,
      bandwidth: 1,
      codecs: "",
    };
    await expect(checkSegment(bin, file, rendition, false)).resolves.toBeUndefined();
  });
});
