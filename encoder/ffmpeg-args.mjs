// @ts-check
// The ffmpeg commands of the encoder's jobs (pure: a plan and a job in, an argument list out).
//
// A run encodes segments `from` to `to` of some renditions: it reads the source from a second
// before its first frame (source.mjs: through the Worker, by range), puts the pictures on the
// plan's frame grid (`fps` with an absolute start, so frame k of the video is frame k whatever run
// makes it), and cuts each rendition into segments at exact frame numbers. Timestamps are the
// source's own (`-copyts`), moved so the video starts at TIMESTAMP_BASE_SECONDS: every segment
// lands at the same instants whichever run makes it. Audio is resampled, padded with silence past
// its end, and trimmed to whole packets of the plan's AAC grid, after a one-packet pre-roll that
// the priming packets are dropped with, so segments from different runs join without a gap or
// an overlap.

import { frameAt, stillSize } from "../media-plan/pictures.mjs";
import {
  AUDIO_BITRATE,
  AUDIO_FRAME,
  AUDIO_RATE,
  firstAudioPacket,
  frameTime,
  LEAD_IN_SECONDS,
  segmentCount,
  segmentFrames,
  TIMESTAMP_BASE_SECONDS,
  topRendition,
  trackAudioPacket,
} from "../media-plan/plan.mjs";
import { imageInput, sourceInput, TRACK_FORMATS } from "./source.mjs";

/** @typedef {import("../media-plan/plan.mjs").Plan} Plan */
/** @typedef {import("../media-plan/plan.mjs").PlannedRendition} PlannedRendition */
/** @typedef {import("./source.mjs").SourceInput} SourceInput */
/** @typedef {{ file: string, head: Uint8Array }} WatermarkFile */
/**
 * @typedef {{
 *   plan: Plan,
 *   source: SourceInput,
 *   watermark: WatermarkFile | null,
 *   threads: number,
 *   features: Features,
 * }} Common
 */
/**
 * What the ffmpeg at hand can do beyond the basics (binaries.mjs finds out): drop the AAC
 * encoder's priming packets (the `noise` bitstream filter's `drop` expression, ffmpeg 5 on), and
 * hold the last picture past the source's end (`tpad`, ffmpeg 4.2 on). Without them the audio of
 * two runs overlaps by one packet, and a run past the source's last picture is short.
 * @typedef {{ dropPriming: boolean, holdLastPicture: boolean }} Features
 */

export const WATERMARK_WIDTH = 0.15;
export const WATERMARK_MARGIN = 0.02;

/** A number as ffmpeg reads it: no exponent, at most 6 decimals. @param {number} value */
export function decimal(value) {
  return String(Number(value.toFixed(6)));
}

/**
 * The overlay filter's options that put a watermark on a frame `frameWidth` wide, at `position`,
 * 2% of the frame's width from the nearest edges.
 * @param {import("../media-plan/settings.mjs").Position} position
 * @param {number} frameWidth
 */
export function overlayPosition(position, frameWidth) {
  const m = Math.round(WATERMARK_MARGIN * frameWidth);
  const right = `main_w-overlay_w-${m}`;
  const bottom = `main_h-overlay_h-${m}`;
  switch (position) {
    case "top-left":
      return `x=${m}:y=${m}`;
    case "top-right":
      return `x=${right}:y=${m}`;
    case "bottom-left":
      return `x=${m}:y=${bottom}`;
    case "bottom-right":
      return `x=${right}:y=${bottom}`;
    case "center":
      return "x=(main_w-overlay_w)/2:y=(main_h-overlay_h)/2";
  }
}

/** The watermark's width on a frame `frameWidth` wide (its height follows its aspect ratio). @param {number} frameWidth */
export function watermarkWidth(frameWidth) {
  return Math.max(1, Math.round(WATERMARK_WIDTH * frameWidth));
}

/** @param {string} prefix @param {number} n */
function labels(prefix, n) {
  return Array.from({ length: n }, (_, i) => `[${prefix}${i}]`).join("");
}

/**
 * The pictures from `first` on, on the plan's frame grid: [0:v] deinterlaced when it is
 * interlaced, one picture per grid instant from frame `first` (absolute time, so any run agrees),
 * the last picture held past the source's end; split `n` ways as [s0]…
 * @param {Plan} plan @param {Features} features @param {number} first @param {number} n
 */
function pictures(plan, features, first, n) {
  const { num, den } = plan.frameRate;
  const deinterlace = plan.source.interlaced ? "bwdif=mode=send_frame:deint=interlaced," : "";
  const start = decimal(sourceTime(plan, frameTime(plan, first)));
  const hold = features.holdLastPicture ? ",tpad=stop=-1:stop_mode=clone" : "";
  return `[0:${plan.source.videoStream}]${deinterlace}fps=${num}/${den}:start_time=${start}${hold},split=${n}${labels("s", n)}`;
}

/**
 * Each rendition's picture: [s<i>] scaled (limited range, square pixels), watermarked, as [v<i>].
 * @param {Plan} plan @param {PlannedRendition[]} renditions @param {boolean} watermark
 * @returns {string[]}
 */
function renditionChains(plan, renditions, watermark) {
  const n = renditions.length;
  const chains = [];
  if (watermark && plan.watermark) {
    // Opacity scales the image's own alpha, so a transparent PNG stays transparent where it was.
    chains.push(`[1:v]format=rgba,colorchannelmixer=aa=${decimal(plan.watermark.opacity)},split=${n}${labels("w", n)}`);
  }
  renditions.forEach((r, i) => {
    const scaled = `[s${i}]scale=${r.width}:${r.height}:out_range=tv,setsar=1`;
    if (watermark && plan.watermark) {
      chains.push(`[w${i}]scale=${watermarkWidth(r.width)}:-1[m${i}]`);
      const overlay = `overlay=${overlayPosition(plan.watermark.position, r.width)}:format=auto`;
      chains.push(`${scaled}[b${i}]`, `[b${i}][m${i}]${overlay},format=yuv420p[v${i}]`);
    } else {
      chains.push(`${scaled},format=yuv420p[v${i}]`);
    }
  });
  return chains;
}

/**
 * The source's timestamp of an instant `seconds` into the video: after the source's start time and,
 * for a clip, its offset into the source.
 * @param {Plan} plan @param {number} seconds
 */
function sourceTime(plan, seconds) {
  return plan.source.startTime + plan.source.offset + seconds;
}

/**
 * Where a run starts reading: a second before the frame `seconds` into the video, so the previous
 * keyframe and the audio pre-roll are there. Relative to the source's start (ffmpeg adds the start
 * time to `-ss`), so a clip's offset is added.
 * @param {Plan} plan @param {number} seconds
 */
function seekTo(plan, seconds) {
  return ["-ss", decimal(Math.max(0, plan.source.offset + seconds - LEAD_IN_SECONDS)), "-noaccurate_seek"];
}

/**
 * How every encoding run starts: quiet but for errors, no questions, outputs overwritten, progress
 * on standard output (what the no-progress watchdog reads).
 */
export const RUN_FLAGS = ["-hide_banner", "-nostdin", "-nostats", "-v", "error", "-y", "-progress", "pipe:1"];

/** @param {Common} common */
function inputs(common) {
  const { plan, source, watermark } = common;
  return [
    ...RUN_FLAGS,
    "-copyts",
    "-filter_complex_threads",
    String(common.threads),
    "-threads",
    String(common.threads),
    ...sourceInput(source, plan.source.format),
    ...(watermark && plan.watermark ? imageInput(watermark.file, watermark.head) : []),
  ];
}

/** Output timestamps: the source's own, moved so the video starts at TIMESTAMP_BASE_SECONDS. @param {Plan} plan */
function timestampOffset(plan) {
  return ["-output_ts_offset", decimal(TIMESTAMP_BASE_SECONDS - sourceTime(plan, 0))];
}

/**
 * H.264 for one rendition: constant quality under the rendition's peak rate, at the plan's level,
 * keyframes only every `keyframe` frames from the run's first (so at every segment's start), closed
 * GOPs, and B-frames only at rates where their delay stays under a tenth of a second.
 * @param {Plan} plan @param {PlannedRendition} r @param {number} threads
 */
function videoCodec(plan, r, threads) {
  const keyframe = plan.framesPerSegment % 2 === 0 ? plan.framesPerSegment / 2 : plan.framesPerSegment;
  const level = `${Math.floor(r.level / 10)}.${r.level % 10}`;
  const bFrames = plan.bFrames ? "bframes=3:b-pyramid=normal" : "bframes=0";
  return [
    "-c:v",
    "libx264",
    "-preset",
    "veryfast",
    "-profile:v",
    "high",
    "-level:v",
    level,
    "-pix_fmt",
    "yuv420p",
    "-crf",
    "21",
    "-maxrate:v",
    `${r.maxrateKbps}k`,
    "-bufsize:v",
    `${2 * r.maxrateKbps}k`,
    "-threads",
    String(threads),
    "-force_key_frames",
    `expr:eq(mod(n,${keyframe}),0)`,
    "-forced-idr",
    "1",
    "-x264-params",
    `scenecut=0:${bFrames}`,
  ];
}

// No source metadata (a phone's location, say) reaches an output.
const NO_METADATA = ["-map_metadata", "-1", "-map_chapters", "-1", "-max_muxing_queue_size", "1024"];

/** Seconds from the start at packet `j` of the plan's AAC grid. @param {number} j */
function packetTime(j) {
  return (j * AUDIO_FRAME) / AUDIO_RATE;
}

/**
 * Packets of pre-roll before a run's first packet `j0`: one, whose decoding the priming drop
 * throws away with the priming, where this ffmpeg can drop them; none at the very start.
 * @param {Features} features @param {number} j0
 */
function preRollOf(features, j0) {
  return features.dropPriming && j0 > 0 ? 1 : 0;
}

/**
 * Audio stream `stream` of the input at the output's rate, padded with silence past its end, and
 * trimmed to `span` (seconds, in the input's timestamps, on the AAC grid). With `fromStart`, for a
 * run that reads the input from its beginning, a stream whose first sample comes after the span's
 * start gets silence before it, so every sample keeps its timestamp: an audio stream that starts
 * after the file does, and ffmpeg 4, which reads an MP4's AAC priming as a first frame 23 ms late
 * (without this the whole run follows it). `first_pts` names the first sample's timestamp, so it
 * is only right where nothing before the span was read.
 * @param {number} stream @param {{ start: number, end: number }} span @param {boolean} [fromStart]
 */
function audioChain(stream, span, fromStart = false) {
  const align = fromStart ? `:async=1:first_pts=${Math.round(span.start * AUDIO_RATE)}` : "";
  return `[0:${stream}]aresample=${AUDIO_RATE}${align},apad,atrim=start=${decimal(span.start)}:end=${decimal(span.end)}`;
}

/**
 * Every output's AAC (plan.mjs): stereo at AUDIO_BITRATE, the encoder's priming packet and the
 * `preRoll` packets after it dropped where this ffmpeg can.
 * @param {Features} features @param {number} preRoll
 */
function aacCodec(features, preRoll) {
  const drop = features.dropPriming ? ["-bsf:a", `noise=drop=lt(n\\,${preRoll + 1})`] : [];
  return ["-c:a", "aac", "-b:a", String(AUDIO_BITRATE), "-ac", "2", ...drop];
}

/**
 * The segment muxer's output: MPEG-TS segments cut at the frames of `splits`, numbered from the
 * run's first, written to `<outDir>/<name>/seg_NNNNN.ts` and listed as ffmpeg finishes each in
 * `<outDir>/<name>.csv` (segments.mjs reads the list to send each one as soon as it is made).
 * @param {{ from: number, outDir: string }} run @param {string} name @param {number[]} splits
 */
function segmentMuxer(run, name, splits) {
  return [
    "-f",
    "segment",
    "-segment_format",
    "mpegts",
    "-segment_frames",
    splits.join(","),
    "-segment_start_number",
    String(run.from),
    "-segment_list",
    `${run.outDir}/${name}.csv`,
    "-segment_list_type",
    "csv",
    `${run.outDir}/${name}/seg_%05d.ts`,
  ];
}

/**
 * The ffmpeg arguments of a segments job: segments `from` (inclusive) to `to` (exclusive) of each
 * of `renditions`, written as `<outDir>/<resolution>/seg_NNNNN.ts`, each rendition listing its
 * finished segments in `<outDir>/<resolution>.csv` as ffmpeg closes them.
 * @param {Common & { from: number, to: number, renditions: PlannedRendition[], outDir: string }} run
 * @returns {string[]}
 */
export function segmentArgs(run) {
  const { plan, renditions } = run;
  const n = renditions.length;
  if (n === 0) throw new RangeError("a run needs at least one rendition");
  const count = segmentCount(plan);
  if (!(run.from >= 0 && run.to > run.from && run.to <= count))
    throw new RangeError(`no segments ${run.from}-${run.to}`);
  const first = segmentFrames(plan, run.from).first;
  const last = segmentFrames(plan, run.to - 1);
  const frames = last.first + last.count - first;
  const chains = [pictures(plan, run.features, first, n), ...renditionChains(plan, renditions, run.watermark !== null)];
  const audio = plan.audio && plan.source.audioStream !== null;
  // The run's audio: packets firstAudioPacket(from) up to firstAudioPacket(to), after one packet
  // of pre-roll (none at the very start), whose priming and pre-roll packets are then dropped.
  const j0 = firstAudioPacket(plan, run.from);
  const j1 = firstAudioPacket(plan, run.to);
  const preRoll = preRollOf(run.features, j0);
  if (audio) {
    const span = { start: sourceTime(plan, packetTime(j0 - preRoll)), end: sourceTime(plan, packetTime(j1)) };
    const stream = /** @type {number} */ (plan.source.audioStream);
    chains.push(`${audioChain(stream, span)},asplit=${n}${labels("a", n)}`);
  }
  /** @type {number[]} */
  const splits = [];
  for (let frame = plan.framesPerSegment; frame < frames; frame += plan.framesPerSegment) splits.push(frame);
  // A run of one segment still names a split (at its end, never reached): without one the segment
  // muxer would cut every 2 s.
  if (splits.length === 0) splits.push(frames);
  const args = [...seekTo(plan, frameTime(plan, first)), ...inputs(run), "-filter_complex", chains.join(";")];
  renditions.forEach((r, i) => {
    args.push("-map", `[v${i}]`, ...(audio ? ["-map", `[a${i}]`] : []), "-frames:v", String(frames));
    args.push(...videoCodec(plan, r, run.threads));
    if (audio) args.push(...aacCodec(run.features, preRoll));
    args.push(...NO_METADATA, ...timestampOffset(plan), ...segmentMuxer(run, r.resolution, splits));
  });
  return args;
}

/**
 * The ffmpeg arguments of an audio job (docs/audio-tracks.md): segments `from` (inclusive) to `to`
 * (exclusive) of an added audio track, from the first audio stream of the track's own file
 * (`track`, as probed), written as `<outDir>/audio/seg_NNNNN.ts` (AAC at 48 kHz in audio-only
 * MPEG-TS) and listed in `<outDir>/audio.csv` as ffmpeg closes them. Track time 0 is the video's
 * time 0 (the file's start, as a video's source's start): its packets are the plan's AAC grid cut
 * at each segment's first frame (`trackAudioPacket`), at the timestamps the video's own segments
 * have (TIMESTAMP_BASE_SECONDS on), so a player switches between the two on one timeline. A track
 * longer than the video is cut at its end; a shorter one goes on in silence (`apad`). As for a
 * video's run, one packet of pre-roll is encoded and dropped with the priming where this ffmpeg
 * can; where it cannot, the priming packet opens the run and each cut moves one packet on.
 * @param {{
 *   plan: Plan,
 *   source: SourceInput,
 *   track: { format: string, startTime: number, audioStream: number },
 *   features: Features,
 *   from: number,
 *   to: number,
 *   outDir: string,
 * }} run
 * @returns {string[]}
 */
export function audioTrackArgs(run) {
  const { plan, track, features } = run;
  if (!(run.from >= 0 && run.to > run.from && run.to <= segmentCount(plan)))
    throw new RangeError(`no segments ${run.from}-${run.to}`);
  const j0 = trackAudioPacket(plan, run.from);
  const j1 = trackAudioPacket(plan, run.to);
  const preRoll = preRollOf(features, j0);
  // In the track's own timestamps.
  const span = { start: track.startTime + packetTime(j0 - preRoll), end: track.startTime + packetTime(j1) };
  const priming = features.dropPriming ? 0 : 1;
  /** @type {number[]} */
  const splits = [];
  for (let index = run.from + 1; index < run.to; index++) splits.push(trackAudioPacket(plan, index) - j0 + priming);
  // A run of one segment still names a split, past its end: without one the muxer cuts every 2 s.
  if (splits.length === 0) splits.push(j1 - j0 + priming + 1);
  return [
    "-ss",
    decimal(Math.max(0, packetTime(j0 - preRoll) - LEAD_IN_SECONDS)),
    "-noaccurate_seek",
    ...RUN_FLAGS,
    "-copyts",
    "-threads",
    "1",
    ...sourceInput(run.source, track.format, TRACK_FORMATS),
    "-filter_complex",
    `${audioChain(track.audioStream, span, run.from === 0)}[a]`,
    "-map",
    "[a]",
    ...aacCodec(features, preRoll),
    ...NO_METADATA,
    "-output_ts_offset",
    decimal(TIMESTAMP_BASE_SECONDS - track.startTime),
    ...segmentMuxer(run, "audio", splits),
  ];
}

/** A JPEG written as one image, with no metadata of the source. */
export const STILL_OUTPUT = ["-map_metadata", "-1", "-f", "image2", "-update", "1"];

/**
 * The ffmpeg arguments of a picture of the video at `time` seconds (snapped to the frame grid):
 * the highest rendition's picture, watermark included, as a JPEG `width` wide (default its own),
 * its height keeping the aspect (pictures.mjs, stillSize).
 * @param {Common & { time: number, width?: number, file: string }} still
 * @returns {string[]}
 */
export function stillArgs(still) {
  const { plan } = still;
  const top = topRendition(plan);
  const frame = frameAt(plan, still.time);
  const chains = [pictures(plan, still.features, frame, 1), ...renditionChains(plan, [top], still.watermark !== null)];
  const size = stillSize(plan, still.width);
  // The JPEG's full range is converted here, leaving the renditions' own range alone.
  const resize = size.width === top.width ? "scale=out_range=pc" : `scale=${size.width}:${size.height}:out_range=pc`;
  chains.push(`[v0]${resize},format=yuvj420p[still]`);
  return [
    ...seekTo(plan, frameTime(plan, frame)),
    ...inputs(still),
    "-filter_complex",
    chains.join(";"),
    "-map",
    "[still]",
    "-frames:v",
    "1",
    "-q:v",
    "2",
    ...STILL_OUTPUT,
    still.file,
  ];
}
