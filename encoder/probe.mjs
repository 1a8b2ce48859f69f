// @ts-check
// What a source is, by ffprobe: its duration, display size (pixel aspect and rotation applied),
// which streams to encode, and whether it is a decodable video at all. `interpretProbe` is the
// pure part; `probe` runs ffprobe twice (the streams, then the first frames of the video stream).

import { describeExit, runBinary } from "./binaries.mjs";

/** @typedef {import("./binaries.mjs").Binary} Binary */
/**
 * @typedef {{
 *   valid: true,
 *   duration: number | null,
 *   width: number,
 *   height: number,
 *   videoStream: number,
 *   audioStream: number | null,
 *   frameRate: number | null,
 *   interlaced: boolean,
 *   rotation: number,
 *   format: string,
 * }} VideoSource
 */
/** @typedef {{ valid: false, reason: string }} InvalidSource */

/** ffprobe could not be run to an answer (killed, timed out, not started): worth retrying. */
export class ProbeFailed extends Error {
  /** @param {string} message */
  constructor(message) {
    super(message);
    this.name = "ProbeFailed";
  }
}

// Demuxers that turn arbitrary bytes or a single picture into a "video" stream: text-art formats
// that ffprobe picks for random data by extension or by default, and still images.
const NOT_VIDEO_FORMATS = new Set(["bin", "xbin", "adf", "idf", "tty", "image2", "data"]);

/** @param {unknown} value */
function positiveNumber(value) {
  const n = typeof value === "string" ? Number(value) : typeof value === "number" ? value : Number.NaN;
  return Number.isFinite(n) && n > 0 ? n : null;
}

/** "30000/1001" → 29.97…; "0/0" or anything else → null. @param {unknown} value */
function ratio(value) {
  if (typeof value !== "string") return null;
  const match = /^(\d+)[/:](\d+)$/.exec(value);
  if (!match) return null;
  const n = Number(match[1]);
  const d = Number(match[2]);
  return n > 0 && d > 0 ? n / d : null;
}

/** @param {Record<string, unknown>} stream the rotation in degrees, from the display matrix or the old `rotate` tag */
function rotationOf(stream) {
  const sideData = Array.isArray(stream.side_data_list) ? stream.side_data_list : [];
  for (const entry of sideData) {
    const value = /** @type {{ rotation?: unknown }} */ (entry).rotation;
    if (typeof value === "number" && Number.isFinite(value)) return value;
  }
  const tags = /** @type {Record<string, unknown>} */ (stream.tags ?? {});
  const tag = Number(tags.rotate);
  return Number.isFinite(tag) ? tag : 0;
}

/**
 * @param {unknown} value
 * @returns {Record<string, unknown>[]}
 */
function records(value) {
  return Array.isArray(value) ? value.filter((v) => typeof v === "object" && v !== null) : [];
}

/**
 * The source described by ffprobe's `-show_format -show_streams` JSON, and the number of frames
 * of its video stream that decoded.
 * @param {unknown} info
 * @param {number} decodedFrames
 * @returns {VideoSource | InvalidSource}
 */
export function interpretProbe(info, decodedFrames) {
  const root = /** @type {{ streams?: unknown, format?: Record<string, unknown> }} */ (
    typeof info === "object" && info !== null ? info : {}
  );
  const format = root.format ?? {};
  const formatName = typeof format.format_name === "string" ? format.format_name : "";
  if (!formatName) return { valid: false, reason: "the file is not in a format that can be read" };
  const streams = records(root.streams);
  // Cover art in an audio file is a video stream of one picture, marked attached_pic.
  const isCover = (/** @type {Record<string, unknown>} */ s) =>
    /** @type {{ attached_pic?: unknown } | undefined} */ (s.disposition)?.attached_pic === 1;
  const video = streams.find((s) => s.codec_type === "video" && !isCover(s));
  const audio = streams.find((s) => s.codec_type === "audio");
  if (!video) {
    return { valid: false, reason: audio ? "the file has audio but no video" : "the file has no video stream" };
  }
  if (NOT_VIDEO_FORMATS.has(formatName) || formatName.endsWith("_pipe")) {
    return { valid: false, reason: "the file is a still image or not a video" };
  }
  const codedWidth = positiveNumber(video.width);
  const codedHeight = positiveNumber(video.height);
  if (!codedWidth || !codedHeight) return { valid: false, reason: "the video stream has no picture size" };
  if (decodedFrames < 1) return { valid: false, reason: "no frame of the video could be decoded" };

  const pixelAspect = ratio(video.sample_aspect_ratio) ?? 1;
  let width = Math.max(1, Math.round(codedWidth * pixelAspect));
  let height = Math.round(codedHeight);
  const rotation = rotationOf(video);
  if (Math.abs(Math.round(rotation / 90)) % 2 === 1) [width, height] = [height, width];

  return {
    valid: true,
    duration: positiveNumber(format.duration) ?? positiveNumber(video.duration),
    width,
    height,
    videoStream: Number(video.index),
    audioStream: audio ? Number(audio.index) : null,
    frameRate: ratio(video.avg_frame_rate) ?? ratio(video.r_frame_rate),
    interlaced: ["tt", "bb", "tb", "bt"].includes(String(video.field_order)),
    rotation,
    format: formatName,
  };
}

/**
 * @param {Binary} ffprobe
 * @param {string} file
 * @param {{ signal?: AbortSignal, timeoutMs?: number }} [options]
 * @returns {Promise<VideoSource | InvalidSource>}
 */
export async function probe(ffprobe, file, options = {}) {
  const timeoutMs = options.timeoutMs ?? 120_000;
  /** @param {string[]} args */
  const run = async (args) => {
    const result = await runBinary(ffprobe, ["-v", "error", "-print_format", "json", ...args, file], {
      signal: options.signal,
      timeoutMs,
      keep: 4_000_000,
    });
    if (result.signal) throw new ProbeFailed(`ffprobe ${describeExit(result)}`);
    return result;
  };
  const streams = await run(["-show_format", "-show_streams"]);
  // ffprobe exits non-zero when it cannot read the file as any format it knows.
  if (streams.code !== 0) return { valid: false, reason: "the file is not in a format that can be read" };
  const info = parseJson(streams.stdout);
  const first = interpretProbe(info, 1);
  if (!first.valid) return first;
  // Decode the first packets of the chosen video stream: a header alone is not a video.
  const frames = await run([
    "-select_streams",
    String(first.videoStream),
    "-read_intervals",
    "%+#16",
    "-show_entries",
    "frame=width,height",
  ]);
  const decoded =
    frames.code === 0 ? records(/** @type {{ frames?: unknown }} */ (parseJson(frames.stdout)).frames) : [];
  return interpretProbe(info, decoded.length);
}

/** @param {string} text @returns {Record<string, unknown>} */
function parseJson(text) {
  try {
    const value = JSON.parse(text);
    return typeof value === "object" && value !== null ? value : {};
  } catch {
    return {};
  }
}
