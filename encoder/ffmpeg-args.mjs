// @ts-check
// The one ffmpeg command that makes every output of a job (pure: a plan in, an argument list out).
// It works with Debian's ffmpeg (5.1 here, 7.1 in the container) and with the 4.1 build that the
// npm package @ffmpeg-installer ships, which is why variant folders are numbered (`%v`; 4.1 has
// no `name:` in -var_stream_map) and renamed afterwards, and why the master playlist is written
// by the encoder (see playlist.mjs) rather than by the muxer.

import { labelNumber } from "./ladder.mjs";

/** @typedef {import("./ladder.mjs").Rendition} Rendition */
/** @typedef {import("./protocol.mjs").Position} Position */
/**
 * @typedef {{
 *   source: string,
 *   videoStream: number,
 *   audioStream: number | null,
 *   frameRate: number | null,
 *   interlaced: boolean,
 *   renditions: Rendition[],
 *   watermark: { path: string, position: Position, opacity: number } | null,
 *   mp4: boolean,
 *   posterTime: number,
 *   outDir: string,
 *   threads: number,
 * }} EncodePlan
 */

/** Seconds between keyframes: every rendition gets them at the same instants. */
export const KEYFRAME_SECONDS = 2;
/** Target HLS segment length; segments cut at the first keyframe after it, so they are 4 s. */
export const SEGMENT_SECONDS = 4;
/** Frame rates above this are reduced to it. */
export const MAX_FRAME_RATE = 60;
export const AUDIO_BITRATE = 128_000;
export const WATERMARK_WIDTH = 0.15;
export const WATERMARK_MARGIN = 0.02;

// Peak video bitrate (kbit/s) per shorter side, for about 30 frames a second; the constant-quality
// encode stays under it (capped CRF), so a rendition's bandwidth is bounded.
const MAX_RATES = /** @type {const} */ ([
  [240, 400],
  [360, 800],
  [480, 1400],
  [720, 2800],
  [1080, 5000],
  [1440, 9000],
  [2160, 16000],
]);

/** @param {string} resolution */
export function maxRateKbps(resolution) {
  const short = labelNumber(resolution);
  const row = MAX_RATES.find(([side]) => short <= side) ?? MAX_RATES[MAX_RATES.length - 1];
  return /** @type {readonly [number, number]} */ (row)[1];
}

/** When the poster frame is taken: 1 s in, or a quarter of a clip shorter than 4 s. @param {number} duration */
export function posterTime(duration) {
  return Number.isFinite(duration) && duration > 0 ? Math.min(1, duration / 4) : 0;
}

/**
 * The overlay filter's options that put a watermark `width`×… on a frame `frameWidth` wide, at
 * `position`, 2% of the frame's width from the nearest edges.
 * @param {Position} position
 * @param {number} frameWidth
 */
export function overlayPosition(position, frameWidth) {
  const m = Math.round(WATERMARK_MARGIN * frameWidth);
  const left = `${m}`;
  const right = `main_w-overlay_w-${m}`;
  const top = `${m}`;
  const bottom = `main_h-overlay_h-${m}`;
  switch (position) {
    case "top-left":
      return `x=${left}:y=${top}`;
    case "top-right":
      return `x=${right}:y=${top}`;
    case "bottom-left":
      return `x=${left}:y=${bottom}`;
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

/**
 * The filter graph: the source split once per rendition, each scaled (and watermarked); the top
 * rendition split again for the MP4 and the poster. Labels: [v0]…[vN-1] for the HLS variants,
 * [mp4] and [poster].
 * @param {EncodePlan} plan
 */
export function filterGraph(plan) {
  const n = plan.renditions.length;
  const chains = [];
  // Interlaced pictures become one frame per frame (bwdif, only on frames flagged interlaced).
  const deinterlace = plan.interlaced ? "bwdif=mode=send_frame:deint=interlaced," : "";
  const fps = plan.frameRate && plan.frameRate > MAX_FRAME_RATE + 0.5 ? `fps=${MAX_FRAME_RATE},` : "";
  chains.push(`[0:${plan.videoStream}]${deinterlace}${fps}split=${n}${labels("s", n)}`);
  if (plan.watermark) {
    // Opacity scales the image's own alpha, so a transparent PNG stays transparent where it was.
    chains.push(`[1:v]format=rgba,colorchannelmixer=aa=${decimal(plan.watermark.opacity)},split=${n}${labels("w", n)}`);
  }
  plan.renditions.forEach((rendition, i) => {
    const top = i === n - 1;
    const outputs = top ? `,split=${plan.mp4 ? 3 : 2}[v${i}]${plan.mp4 ? "[mp4]" : ""}[still]` : `[v${i}]`;
    // Limited ("tv") range, as players expect of H.264; ffmpeg 7 would otherwise keep a
    // full-range source's range, or pick full range to suit the poster's JPEG encoder.
    const scaled = `[s${i}]scale=${rendition.width}:${rendition.height}:out_range=tv,setsar=1`;
    if (plan.watermark) {
      const overlay = `overlay=${overlayPosition(plan.watermark.position, rendition.width)}:format=auto`;
      chains.push(`[w${i}]scale=${watermarkWidth(rendition.width)}:-1[m${i}]`);
      chains.push(`${scaled}[b${i}]`, `[b${i}][m${i}]${overlay},format=yuv420p${outputs}`);
    } else {
      chains.push(`${scaled},format=yuv420p${outputs}`);
    }
  });
  // The poster's clock starts at the first frame, whatever the source's start time. Its own
  // scale converts to the JPEG's full range there, leaving the renditions' range alone.
  chains.push(`[still]setpts=PTS-STARTPTS,select=gte(t\\,${decimal(plan.posterTime)}),trim=end_frame=1,scale[poster]`);
  return chains.join(";");
}

/** @param {string} prefix @param {number} n */
function labels(prefix, n) {
  return Array.from({ length: n }, (_, i) => `[${prefix}${i}]`).join("");
}

/** A number as ffmpeg reads it: no exponent, at most 6 decimals. @param {number} value */
function decimal(value) {
  return String(Number(value.toFixed(6)));
}

/** @param {number} threads */
function videoCodec(threads) {
  return [
    "-c:v",
    "libx264",
    "-preset",
    "veryfast",
    "-profile:v",
    "high",
    "-pix_fmt",
    "yuv420p",
    "-crf",
    "21",
    "-threads",
    String(threads),
    // Keyframes at the same instants in every rendition (and the MP4), and only there.
    "-force_key_frames",
    `expr:gte(t,n_forced*${KEYFRAME_SECONDS})`,
    "-forced-idr",
    "1",
    "-x264-params",
    "scenecut=0",
  ];
}

const AUDIO_CODEC = ["-c:a", "aac", "-b:a", String(AUDIO_BITRATE), "-ac", "2"];
// No source metadata (a phone's location, say) reaches an output.
const NO_METADATA = ["-map_metadata", "-1", "-map_chapters", "-1", "-max_muxing_queue_size", "1024"];

/**
 * The variant folder ffmpeg writes rendition `index` to, under `outDir` (renamed to the
 * rendition's label once ffmpeg succeeds).
 * @param {number} index
 */
export function numberedVariantDir(index) {
  return String(index);
}

/**
 * ffmpeg's arguments (without the program) for the whole output set: HLS variants in
 * `<outDir>/<n>/index.m3u8` + `seg_00000.ts`…, `<outDir>/video.mp4` when asked, and
 * `<outDir>/poster.jpg`. Progress goes to standard output as key=value lines.
 * @param {EncodePlan} plan
 * @returns {string[]}
 */
export function ffmpegArgs(plan) {
  if (plan.renditions.length === 0) throw new RangeError("a plan needs at least one rendition");
  const threads = String(plan.threads);
  const audio = plan.audioStream;
  const args = ["-hide_banner", "-nostdin", "-nostats", "-v", "error", "-y", "-progress", "pipe:1"];
  args.push("-filter_complex_threads", threads);
  args.push("-threads", threads, "-i", plan.source);
  if (plan.watermark) args.push("-i", plan.watermark.path);
  args.push("-filter_complex", filterGraph(plan));

  // HLS: one variant per rendition, each with its own copy of the audio.
  plan.renditions.forEach((_, i) => {
    args.push("-map", `[v${i}]`);
    if (audio !== null) args.push("-map", `0:${audio}`);
  });
  args.push(...videoCodec(plan.threads));
  plan.renditions.forEach((rendition, i) => {
    const rate = maxRateKbps(rendition.resolution);
    args.push(`-maxrate:v:${i}`, `${rate}k`, `-bufsize:v:${i}`, `${2 * rate}k`);
  });
  if (audio !== null) args.push(...AUDIO_CODEC);
  const streamMap = plan.renditions.map((_, i) => (audio === null ? `v:${i}` : `v:${i},a:${i}`)).join(" ");
  args.push(
    ...NO_METADATA,
    "-f",
    "hls",
    "-hls_time",
    String(SEGMENT_SECONDS),
    "-hls_list_size",
    "0",
    "-hls_playlist_type",
    "vod",
    "-hls_flags",
    "independent_segments",
    "-hls_segment_type",
    "mpegts",
    "-hls_segment_filename",
    `${plan.outDir}/%v/seg_%05d.ts`,
    "-var_stream_map",
    streamMap,
    `${plan.outDir}/%v/index.m3u8`,
  );

  if (plan.mp4) {
    const top = /** @type {Rendition} */ (plan.renditions[plan.renditions.length - 1]);
    const rate = maxRateKbps(top.resolution);
    args.push("-map", "[mp4]");
    if (audio !== null) args.push("-map", `0:${audio}`);
    args.push(...videoCodec(plan.threads), "-maxrate:v", `${rate}k`, "-bufsize:v", `${2 * rate}k`);
    if (audio !== null) args.push(...AUDIO_CODEC);
    args.push(...NO_METADATA, "-movflags", "+faststart", "-f", "mp4", `${plan.outDir}/video.mp4`);
  }

  args.push("-map", "[poster]", "-frames:v", "1", "-q:v", "2", "-map_metadata", "-1");
  args.push("-f", "image2", "-update", "1", `${plan.outDir}/poster.jpg`);
  return args;
}
