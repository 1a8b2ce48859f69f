// @ts-check
// Tiny test sources, made with whichever ffmpeg the encoder would use, and ffprobe helpers.

import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { runBinary } from "../binaries.mjs";

/** @typedef {import("../binaries.mjs").Binaries} Binaries */
/** @typedef {import("../binaries.mjs").Binary} Binary */
/**
 * @typedef {{
 *   index: number, codec_type: string, codec_name: string, width?: number, height?: number,
 *   pix_fmt?: string, profile?: string, channels?: number, time_base?: string,
 * }} ProbedStream
 */

/**
 * @param {Binary} ffmpeg
 * @param {string[]} args
 * @param {number} [timeoutMs]
 */
async function ffmpegOk(ffmpeg, args, timeoutMs = 60_000) {
  const run = await runBinary(ffmpeg, ["-hide_banner", "-nostdin", "-v", "error", "-y", ...args], { timeoutMs });
  if (run.code !== 0) throw new Error(`ffmpeg ${args.join(" ")} failed: ${run.stderr}`);
}

/**
 * @typedef {{ width: number, height: number, seconds: number, audio?: boolean, rate?: number, faststart?: boolean, fullRange?: boolean, extra?: string[] }} Clip
 */

/**
 * A test pattern clip (with a sine tone unless `audio` is false), H.264/AAC in MP4, read back.
 * @param {Binary} ffmpeg
 * @param {string} file
 * @param {Clip} clip
 */
export async function makeClip(ffmpeg, file, clip) {
  await writeClip(ffmpeg, file, clip);
  return readFile(file);
}

/**
 * A test pattern clip written to `file` (a long one takes a while: ffmpeg gets a minute per 10 min).
 * @param {Binary} ffmpeg
 * @param {string} file
 * @param {Clip} clip
 */
export async function writeClip(ffmpeg, file, clip) {
  const video = ["-f", "lavfi", "-i", `testsrc2=s=${clip.width}x${clip.height}:r=${clip.rate ?? 25}:d=${clip.seconds}`];
  const audio = clip.audio === false ? [] : ["-f", "lavfi", "-i", `sine=f=440:d=${clip.seconds}`];
  await ffmpegOk(
    ffmpeg,
    [
      ...video,
      ...audio,
      "-c:v",
      "libx264",
      "-preset",
      "ultrafast",
      "-pix_fmt",
      clip.fullRange ? "yuvj420p" : "yuv420p",
      ...(clip.audio === false ? [] : ["-c:a", "aac"]),
      ...(clip.faststart ? ["-movflags", "+faststart"] : []),
      ...(clip.extra ?? []),
      "-f",
      "mp4",
      file,
    ],
    // As long as the clip lasts: a machine loaded by other work may write it no faster than real time.
    Math.max(60_000, clip.seconds * 1000),
  );
}

/**
 * A 64×32 watermark image of one colour with an alpha channel: PNG, or WebP (lossless) when
 * `file` ends in .webp (the two types the Worker accepts).
 * @param {Binary} ffmpeg
 * @param {string} file
 * @param {string} colour
 */
export async function makeWatermark(ffmpeg, file, colour) {
  const codec = file.endsWith(".webp") ? ["-c:v", "libwebp", "-lossless", "1"] : [];
  await ffmpegOk(ffmpeg, [
    "-f",
    "lavfi",
    "-i",
    `color=c=${colour}:s=64x32,format=rgba`,
    "-frames:v",
    "1",
    ...codec,
    file,
  ]);
  return readFile(file);
}

/** A 2 s silent 320×180 clip to rotate. @param {Binary} ffmpeg @param {string} dir */
async function scratchClip(ffmpeg, dir) {
  const file = join(dir, "unrotated.mp4");
  await makeClip(ffmpeg, file, { width: 320, height: 180, seconds: 2, audio: false });
  return file;
}

/**
 * `input` with a 90° display rotation, as a phone stores portrait video: the stream stays
 * 320×180. ffmpeg up to 5 takes a `rotate` tag on a stream copy; 6 and later -display_rotation.
 * @param {Binaries} binaries
 * @param {Promise<string>} input
 * @param {string} file
 */
async function makeRotated(binaries, input, file) {
  const source = await input;
  const attempts = [
    ["-i", source, "-c", "copy", "-metadata:s:v:0", "rotate=90", "-f", "mp4", file],
    ["-display_rotation:v:0", "90", "-i", source, "-c", "copy", "-f", "mp4", file],
  ];
  for (const args of attempts) {
    const run = await runBinary(binaries.ffmpeg, ["-hide_banner", "-nostdin", "-v", "error", "-y", ...args]);
    if (run.code !== 0) continue;
    const { streams } = await ffprobeJson(binaries.ffprobe, file);
    // The display matrix (ffprobe 5+) or the old tag (ffprobe 4) says how the picture turns.
    if (/"rotat(e|ion)"/.test(JSON.stringify(streams[0]))) return readFile(file);
  }
  throw new Error("this ffmpeg cannot write a rotated MP4");
}

/**
 * Every source the integration tests use, in `dir`.
 * @param {Binaries} binaries
 * @param {string} dir
 */
export async function makeSources(binaries, dir) {
  const { ffmpeg } = binaries;
  const landscape = await makeClip(ffmpeg, join(dir, "landscape.mp4"), { width: 640, height: 360, seconds: 3 });
  // In full range, as some cameras and phones record.
  const portrait = await makeClip(ffmpeg, join(dir, "portrait.mp4"), {
    width: 360,
    height: 640,
    seconds: 2,
    fullRange: true,
  });
  const silent = await makeClip(ffmpeg, join(dir, "silent.mp4"), { width: 320, height: 180, seconds: 2, audio: false });
  const rotated = await makeRotated(binaries, scratchClip(ffmpeg, dir), join(dir, "rotated.mp4"));
  const long = await makeClip(ffmpeg, join(dir, "long.mp4"), { width: 640, height: 360, seconds: 12 });
  const audioOnly = join(dir, "audio.m4a");
  await ffmpegOk(ffmpeg, ["-f", "lavfi", "-i", "sine=d=2", "-c:a", "aac", "-f", "mp4", audioOnly]);
  // A fast-start MP4 cut just after its header: the streams are described, no frame is there.
  const whole = await makeClip(ffmpeg, join(dir, "whole.mp4"), {
    width: 320,
    height: 180,
    seconds: 1,
    audio: false,
    faststart: true,
  });
  const headerOnly = whole.subarray(0, whole.indexOf("mdat") + 24);
  return {
    ...(await makeHostileSources(binaries, dir)),
    landscape,
    portrait,
    silent,
    rotated,
    long,
    audioOnly: await readFile(audioOnly),
    headerOnly,
    // Without its header (moov at the end): ffprobe cannot open it.
    truncated: landscape.subarray(0, 3000),
    zero: Buffer.alloc(0),
    random: pseudoRandom(200_000),
    watermark: await makeWatermark(ffmpeg, join(dir, "watermark.png"), "red"),
    watermarkWebp: await makeWatermark(ffmpeg, join(dir, "watermark.webp"), "blue"),
  };
}

/**
 * Sources made to trip an encoder (docs/encoding.md#hostile-sources-failures-and-deletes), and the odd but
 * decodable ones it must encode.
 * @param {Binaries} binaries
 * @param {string} dir
 */
export async function makeHostileSources(binaries, dir) {
  const { ffmpeg } = binaries;
  // A local MPEG-TS of a single colour, which a playlist will name.
  const secret = join(dir, "secret.ts");
  await ffmpegOk(ffmpeg, [
    "-f",
    "lavfi",
    "-i",
    "color=c=green:s=320x240:d=2",
    "-c:v",
    "libx264",
    "-f",
    "mpegts",
    secret,
  ]);
  const decoy = join(dir, "decoy.ts");
  await ffmpegOk(ffmpeg, ["-f", "lavfi", "-i", "testsrc2=s=320x240:d=2", "-c:v", "libx264", "-f", "mpegts", decoy]);
  // An HLS playlist naming the local file, followed by a valid MPEG-TS: one reading takes it for a
  // transport stream, another for a playlist.
  const playlist = `#EXTM3U\n#EXT-X-TARGETDURATION:10\n#EXTINF:10,\nfile://${secret}\n#EXT-X-ENDLIST\n`;
  const polyglot = Buffer.concat([Buffer.from(playlist), await readFile(decoy)]);
  // A Matroska file of one 40 ms frame whose header declares 10 hours.
  const tiny = join(dir, "tiny.mkv");
  await ffmpegOk(ffmpeg, [
    "-f",
    "lavfi",
    "-i",
    "testsrc2=s=160x120:r=25:d=0.04",
    "-c:v",
    "libx264",
    "-f",
    "matroska",
    tiny,
  ]);
  const declaresTenHours = Buffer.from(await readFile(tiny));
  const element = declaresTenHours.indexOf(Buffer.from([0x44, 0x89, 0x88]));
  if (element < 0) throw new Error("no 8-byte Duration element in the Matroska file");
  declaresTenHours.writeDoubleBE(10 * 3600 * 1000, element + 3);
  // Two frames at 1 fps.
  const twoFrames = await makeClip(ffmpeg, join(dir, "two-frames.mp4"), {
    width: 320,
    height: 240,
    seconds: 2,
    rate: 1,
    audio: false,
  });
  // Two frames of one colour at 1 fps, 640×360: each segment of it holds a few hundred bytes.
  const flatFile = join(dir, "flat-two-frames.mp4");
  await ffmpegOk(ffmpeg, [
    ...["-f", "lavfi", "-i", "color=c=blue:s=640x360:r=1:d=2"],
    ...["-c:v", "libx264", "-preset", "ultrafast", "-pix_fmt", "yuv420p", "-f", "mp4", flatFile],
  ]);
  // A pixel aspect ratio of 100:1: 320×240 coded, 32000×240 displayed.
  const wide = await makeClip(ffmpeg, join(dir, "wide.mp4"), {
    width: 320,
    height: 240,
    seconds: 1,
    audio: false,
    extra: ["-vf", "setsar=100/1"],
  });
  // Three pictures, at 0, 5 and 10 hours, in a Matroska file that declares 60 fps (1.4 KB).
  const sparseFile = join(dir, "sparse.mkv");
  await ffmpegOk(ffmpeg, [
    "-f",
    "lavfi",
    "-i",
    "color=c=red:s=64x64:r=1",
    "-frames:v",
    "3",
    "-vf",
    "setpts=N*18000/TB",
    "-vsync",
    "passthrough",
    "-r",
    "60",
    "-c:v",
    "libx264",
    "-g",
    "1",
    "-f",
    "matroska",
    sparseFile,
  ]);
  return {
    polyglot,
    declaresTenHours,
    twoFrames,
    flatTwoFrames: await readFile(flatFile),
    wide,
    sparse: await readFile(sparseFile),
  };
}

/** Bytes that look random but are the same every run (a xorshift generator). @param {number} length */
export function pseudoRandom(length) {
  const bytes = Buffer.alloc(length);
  let x = 0x9e3779b9;
  for (let i = 0; i < length; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    bytes[i] = x & 0xff;
  }
  return bytes;
}

/**
 * @param {Binary} ffprobe
 * @param {string} file
 * @param {string[]} [extra]
 * @returns {Promise<{ streams: ProbedStream[], packets?: { pts_time?: string, flags?: string }[] }>}
 */
export async function ffprobeJson(ffprobe, file, extra = ["-show_streams"]) {
  const run = await runBinary(ffprobe, ["-v", "error", "-print_format", "json", ...extra, file], { timeoutMs: 30_000 });
  if (run.code !== 0) throw new Error(`ffprobe ${file}: ${run.stderr}`);
  return JSON.parse(run.stdout);
}

/**
 * The average colour of a `w`×`h` area of an image at (x, y), as [r, g, b].
 * @param {Binary} ffmpeg
 * @param {string} file
 * @param {{ x: number, y: number, w: number, h: number }} area
 * @param {string} scratch a file to write the one-pixel PPM to
 */
export async function averageColour(ffmpeg, file, area, scratch) {
  await ffmpegOk(ffmpeg, [
    ...["-i", file, "-vf", `crop=${area.w}:${area.h}:${area.x}:${area.y},scale=1:1:flags=area,format=rgb24`],
    ...["-frames:v", "1", "-c:v", "ppm", "-f", "image2", "-update", "1", scratch],
  ]);
  return [...(await readFile(scratch)).subarray(-3)];
}

/**
 * A sine tone of `frequency` Hz lasting `seconds`, written to `file` in the format its name ends
 * with, by ffmpeg's default encoder for it (`.m4a`: AAC in MP4; `.mp3`: MP3; `.wav`: PCM), read back.
 * @param {Binary} ffmpeg @param {string} file @param {number} frequency @param {number} seconds
 */
export async function writeTone(ffmpeg, file, frequency, seconds) {
  await ffmpegOk(ffmpeg, ["-f", "lavfi", "-i", `sine=f=${frequency}:d=${seconds}`, file]);
  return readFile(file);
}

/**
 * What a file or URL of audio sounds like: its dominant frequency and its peak, from its first audio
 * stream decoded to mono 16-bit PCM at 48 kHz (written to `scratch`), its zero crossings counted (a
 * pure tone crosses twice a period).
 * @param {Binary} ffmpeg @param {string} input @param {string} scratch
 */
export async function heardTone(ffmpeg, input, scratch) {
  await ffmpegOk(ffmpeg, ["-i", input, "-map", "0:a:0", "-ac", "1", "-ar", "48000", "-f", "s16le", scratch]);
  const pcm = await readFile(scratch);
  const samples = pcm.length / 2;
  let crossings = 0;
  let peak = 0;
  let previous = 0;
  for (let i = 0; i < samples; i++) {
    const value = pcm.readInt16LE(2 * i);
    peak = Math.max(peak, Math.abs(value));
    if (i > 0 && value >= 0 !== previous >= 0) crossings += 1;
    previous = value;
  }
  return { frequency: crossings / 2 / (samples / 48_000), peak };
}
