// @ts-check
// What a source is, by ffprobe reading it through the Worker (source.mjs): its format, duration,
// display size (pixel aspect and rotation applied), the streams to encode, and whether it is a
// decodable video at all. `interpretProbe` is the pure part; `probe` runs ffprobe twice: the
// streams with the first frames decoded, then the video's last packets, which tell whether the
// duration the file declares is backed by pictures.

import { describeExit, runBinary } from "./binaries.mjs";
import { allowedDemuxer, sourceInput, TRACK_FORMATS } from "./source.mjs";

/** @typedef {import("./binaries.mjs").Binary} Binary */
/** @typedef {import("./source.mjs").SourceInput} SourceInput */
/**
 * A readable video: what planning needs (plan.mjs `Probe`), with the rotation for the log.
 * @typedef {{
 *   valid: true,
 *   format: string,
 *   duration: number | null,
 *   startTime: number,
 *   width: number,
 *   height: number,
 *   videoStream: number,
 *   audioStream: number | null,
 *   audioLanguage: string | null,
 *   frameRate: number | null,
 *   interlaced: boolean,
 *   rotation: number,
 * }} VideoSource
 */
/**
 * An added audio track's file (docs/audio-tracks.md): the demuxer, where its timeline starts, and
 * its first audio stream, which decodes.
 * @typedef {{ valid: true, format: string, startTime: number, audioStream: number }} AudioSource
 */
/** @typedef {{ valid: false, reason: string, detail?: string }} InvalidSource */

/** ffprobe could not be run to an answer (killed, timed out, not started): worth retrying. */
export class ProbeFailed extends Error {
  /** @param {string} message */
  constructor(message) {
    super(message);
    this.name = "ProbeFailed";
  }
}

/** A file declaring this many times the length its pictures reach (and 10 s more) is not believed. */
const DECLARED_SLACK = 2;
/** Seconds read back from the declared end to find the last picture. */
const END_WINDOW_SECONDS = 3;
/** A declared rate is believed unless the pictures found are fewer than this share of it. */
const RATE_SLACK = 2;

/** @param {unknown} value */
function positiveNumber(value) {
  const n = typeof value === "string" ? Number(value) : typeof value === "number" ? value : Number.NaN;
  return Number.isFinite(n) && n > 0 ? n : null;
}

/** @param {unknown} value */
function finiteNumber(value) {
  const n = typeof value === "string" ? Number(value) : typeof value === "number" ? value : Number.NaN;
  return Number.isFinite(n) ? n : null;
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
 * of its video stream that decoded. `duration` is what the file declares (the video stream's own,
 * else the container's), before `probe` checks it against the pictures.
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
  const demuxer = formatName ? allowedDemuxer(formatName) : null;
  if (!demuxer) return { valid: false, reason: "the file is not in a video format that can be read" };
  const streams = records(root.streams);
  // Cover art in an audio file is a video stream of one picture, marked attached_pic.
  const isCover = (/** @type {Record<string, unknown>} */ s) =>
    /** @type {{ attached_pic?: unknown } | undefined} */ (s.disposition)?.attached_pic === 1;
  const video = streams.find((s) => s.codec_type === "video" && !isCover(s));
  const audio = streams.find((s) => s.codec_type === "audio");
  if (!video) {
    return { valid: false, reason: audio ? "the file has audio but no video" : "the file has no video stream" };
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
    format: demuxer,
    duration: positiveNumber(video.duration) ?? positiveNumber(format.duration),
    startTime: finiteNumber(format.start_time) ?? 0,
    width,
    height,
    videoStream: Number(video.index),
    audioStream: audio ? Number(audio.index) : null,
    audioLanguage: audio ? languageTag(audio) : null,
    frameRate: ratio(video.avg_frame_rate) ?? ratio(video.r_frame_rate),
    interlaced: ["tt", "bb", "tb", "bt"].includes(String(video.field_order)),
    rotation,
  };
}

/**
 * The language a stream's metadata names (an ISO 639 code, `eng`), lower case; null when it names
 * none, or `und` (undetermined), or something that is no such code.
 * @param {Record<string, unknown>} stream
 */
export function languageTag(stream) {
  const tags = /** @type {Record<string, unknown>} */ (stream.tags ?? {});
  const tag = typeof tags.language === "string" ? tags.language.trim().toLowerCase() : "";
  return /^[a-z]{2,3}$/.test(tag) && tag !== "und" ? tag : null;
}

/**
 * Where the pictures end, in seconds from the start, from packets ffprobe read (`pts_time`,
 * `duration_time`); null when none has a time.
 * @param {Record<string, unknown>[]} packets
 * @param {number} startTime
 */
export function picturesEnd(packets, startTime) {
  let end = null;
  for (const packet of packets) {
    const pts = finiteNumber(packet.pts_time) ?? finiteNumber(packet.dts_time);
    if (pts === null) continue;
    const at = pts + (positiveNumber(packet.duration_time) ?? 0) - startTime;
    end = end === null ? at : Math.max(end, at);
  }
  return end;
}

/**
 * The frame rate to plan for, bounded by the pictures the file has
 * (docs/encoding.md#hostile-sources-failures-and-deletes: work is bounded by the source's pictures,
 * not by what it declares). The probe sees the pictures in two windows: the first packets (their
 * decoded frames' times, `headTimes`), and the packets of the last END_WINDOW_SECONDS
 * (`tailCount`). The pictures a second there, the denser of the two, is what the file shows; a
 * declared rate more than RATE_SLACK times that is not believed, and the file is planned at the
 * rate its pictures have (plan.mjs raises it to its 1 fps floor). A file of three pictures over 10
 * hours that declares 60 fps is planned at 1 fps: 36,000 frames a rendition, not 2.16 million.
 * @param {number | null} declared the rate the file declares
 * @param {number[]} headTimes seconds of the first decoded frames of the video
 * @param {{ count: number, seconds: number }} tail packets of the video in the end window, and its length
 * @returns {number | null}
 */
export function picturesRate(declared, headTimes, tail) {
  if (declared === null) return null;
  const span = headTimes.length > 1 ? Math.max(...headTimes) - Math.min(...headTimes) : 0;
  const head = span > 0 ? (headTimes.length - 1) / span : 0;
  const end = tail.count / Math.max(1e-3, tail.seconds);
  const seen = Math.max(head, end);
  return seen > 0 && declared > RATE_SLACK * seen ? seen : declared;
}

/**
 * Throws ProbeFailed (the job fails and runs again) when ffprobe could not read the source for a
 * reason of the transport, not of the file: refused or timed out, a 5xx. (A 4xx is the file's:
 * ffmpeg tells 400, 401, 403 and 404 apart and calls every other one "4XX", a 416 of an empty
 * source as well; the Worker's source route answers no 408 or 429, and its 410 stops the job at
 * its next call back.)
 * @param {{ stderr: string }} result
 */
function notReached(result) {
  if (/Connection refused|Server returned 5|timed out|Input\/output error/i.test(result.stderr)) {
    throw new ProbeFailed(`ffprobe could not read the source: ${result.stderr.slice(0, 300)}`);
  }
}

/**
 * The duration to encode: what the file declares, checked against where its pictures end. A file
 * declaring far more than its pictures reach (twice, and 10 s more) is not a video of that length.
 * @param {number} declared
 * @param {number | null} pictures
 * @returns {{ duration: number } | { reason: string }}
 */
export function checkedDuration(declared, pictures) {
  if (pictures === null || pictures <= 0) return { reason: "no picture of the video could be found near its end" };
  if (declared > DECLARED_SLACK * pictures + 10) {
    return {
      reason: `the file declares ${Math.round(declared)} s but its pictures end at ${pictures.toFixed(1)} s`,
    };
  }
  return { duration: Math.min(declared, pictures) };
}

/**
 * @param {Binary} ffprobe
 * @param {SourceInput} source
 * @param {{ signal?: AbortSignal, timeoutMs?: number }} [options]
 * @returns {Promise<(VideoSource & { duration: number }) | InvalidSource>}
 */
export async function probe(ffprobe, source, options = {}) {
  const timeoutMs = options.timeoutMs ?? 120_000;
  /** @param {string | null} format @param {string[]} args */
  const run = async (format, args) => {
    const result = await runBinary(
      ffprobe,
      ["-v", "error", "-print_format", "json", ...args, ...sourceInput(source, format)],
      { signal: options.signal, timeoutMs, keep: 4_000_000 },
    );
    if (result.signal) throw new ProbeFailed(`ffprobe ${describeExit(result)}`);
    return result;
  };
  // The streams, and the first packets decoded: a header alone is not a video.
  const streams = await run(null, [
    "-show_format",
    "-show_streams",
    "-read_intervals",
    "%+#16",
    "-show_entries",
    "frame=stream_index,best_effort_timestamp_time",
  ]);
  // ffprobe exits non-zero when it cannot read the file as any allowed format.
  if (streams.code !== 0) {
    notReached(streams);
    return {
      valid: false,
      reason: "the file is not in a video format that can be read",
      detail: streams.stderr.trim().split("\n").slice(-2).join(" | "),
    };
  }
  const info = parseJson(streams.stdout);
  const first = interpretProbe(info, 1);
  if (!first.valid) return first;
  const decoded = records(info.frames).filter((frame) => Number(frame.stream_index) === first.videoStream);
  const checked = interpretProbe(info, decoded.length);
  if (!checked.valid) return checked;
  const video = ["-select_streams", String(checked.videoStream)];

  /** @param {string[]} interval @param {number} from the window's start (absolute seconds) */
  const picturesUntil = async (interval, from = Number.NEGATIVE_INFINITY) => {
    const read = await run(checked.format, [
      ...video,
      ...interval,
      "-show_entries",
      "packet=pts_time,dts_time,duration_time",
      "-of",
      "csv=p=0",
    ]);
    if (read.code !== 0) notReached(read);
    const packets = read.code === 0 ? csvPackets(read.stdout) : [];
    // The read starts at the keyframe before the window: only the packets within it are counted.
    const within = packets.filter((packet) => (finiteNumber(packet.pts_time) ?? Number.POSITIVE_INFINITY) >= from);
    return { end: read.code === 0 ? picturesEnd(packets, checked.startTime) : null, count: within.length };
  };
  let declared = checked.duration;
  /** @type {{ end: number | null, count: number }} */
  let pictures;
  if (declared !== null) {
    // The packets from a little before the declared end to a little after it.
    const from = checked.startTime + Math.max(0, declared - END_WINDOW_SECONDS);
    // (An absolute end: a relative one counts from wherever the seek landed, a keyframe before.)
    const to = checked.startTime + declared + END_WINDOW_SECONDS;
    pictures = await picturesUntil(["-read_intervals", `${from}%${to}`], from);
  } else {
    // No duration declared (a browser's MediaRecorder file, say): read every packet's time once.
    pictures = await picturesUntil([]);
    declared = pictures.end;
  }
  if (declared === null) return { valid: false, reason: "the video's duration cannot be read" };
  const duration = checkedDuration(declared, pictures.end);
  if ("reason" in duration) return { valid: false, reason: duration.reason };
  const headTimes = decoded.map((frame) => finiteNumber(frame.best_effort_timestamp_time)).filter((t) => t !== null);
  // The end window, or the whole file when no duration was declared and every packet was read.
  const seconds = checked.duration === null ? duration.duration : Math.min(END_WINDOW_SECONDS, duration.duration);
  const frameRate = picturesRate(checked.frameRate, headTimes, { count: pictures.count, seconds });
  return { ...checked, duration: duration.duration, frameRate };
}

/**
 * Packets from ffprobe's `-of csv=p=0` lines of pts_time,dts_time,duration_time (the output's end
 * is enough: the last pictures are there).
 * @param {string} text
 */
export function csvPackets(text) {
  return text
    .split("\n")
    .map((line) => line.trim().split(","))
    .filter((fields) => fields.length >= 3)
    .map(([pts, dts, duration]) => ({ pts_time: pts, dts_time: dts, duration_time: duration }));
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

/**
 * What an added audio track's file is (docs/audio-tracks.md), by ffprobe reading it through the
 * Worker: a format an audio track may be read with (`TRACK_FORMATS`), its start, and its first
 * audio stream, whose first packets decode. Anything else is not a track: no audio stream, or
 * audio that does not decode.
 * @param {Binary} ffprobe
 * @param {SourceInput} source
 * @param {{ signal?: AbortSignal, timeoutMs?: number }} [options]
 * @returns {Promise<AudioSource | InvalidSource>}
 */
export async function probeAudio(ffprobe, source, options = {}) {
  const result = await runBinary(
    ffprobe,
    [
      "-v",
      "error",
      "-print_format",
      "json",
      "-show_format",
      "-show_streams",
      "-select_streams",
      "a:0",
      "-read_intervals",
      "%+#8",
      "-show_entries",
      "frame=stream_index",
      ...sourceInput(source, null, TRACK_FORMATS),
    ],
    { signal: options.signal, timeoutMs: options.timeoutMs ?? 120_000, keep: 1_000_000 },
  );
  if (result.signal) throw new ProbeFailed(`ffprobe ${describeExit(result)}`);
  if (result.code !== 0) {
    notReached(result);
    return {
      valid: false,
      reason: "the file is not in an audio or video format that can be read",
      detail: result.stderr.trim().split("\n").slice(-2).join(" | "),
    };
  }
  return interpretAudioProbe(parseJson(result.stdout));
}

/**
 * The track described by ffprobe's JSON of its first audio stream (`-select_streams a:0`, with the
 * frames of its first packets).
 * @param {Record<string, unknown>} info
 * @returns {AudioSource | InvalidSource}
 */
export function interpretAudioProbe(info) {
  const format = /** @type {Record<string, unknown>} */ (info.format ?? {});
  const formatName = typeof format.format_name === "string" ? format.format_name : "";
  const demuxer = formatName ? allowedDemuxer(formatName, TRACK_FORMATS) : null;
  if (!demuxer) return { valid: false, reason: "the file is not in an audio or video format that can be read" };
  const audio = records(info.streams).find((stream) => stream.codec_type === "audio");
  if (!audio) return { valid: false, reason: "the file has no audio stream" };
  const index = Number(audio.index);
  const decoded = records(info.frames).filter((frame) => Number(frame.stream_index) === index);
  if (decoded.length === 0) return { valid: false, reason: "its audio could not be decoded" };
  return { valid: true, format: demuxer, startTime: finiteNumber(format.start_time) ?? 0, audioStream: index };
}
