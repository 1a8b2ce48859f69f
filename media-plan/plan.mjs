// @ts-check
// The encoding plan of a probed source (pure): the renditions, one output frame rate, segments of
// a fixed number of frames on that frame grid, the audio packet grid, and what the master playlist
// says of each rendition. The Worker makes the plan from the probe (so it can serve complete
// playlists before any segment exists) and sends it with every job; the encoder follows it, so a
// segment encoded alone lands on exactly the frames and timestamps it would have in a longer run.

import { ladder } from "./ladder.mjs";

/** Segments last this long, rounded to a whole number of output frames. */
export const SEGMENT_TARGET_SECONDS = 4;
/** Output frame rates stay within these bounds (a higher rate is reduced, a lower one raised). */
export const MAX_FRAME_RATE = 60;
export const MIN_FRAME_RATE = 1;
/** Below this frame rate the encoder uses no B-frames, so a packet's decode time stays near its display time. */
export const B_FRAMES_FROM_RATE = 20;
/** Frames between a B-frame encode's decode and display timestamps (x264 with B-pyramid). */
export const B_FRAME_DELAY = 2;
/** Every output's audio: AAC-LC stereo at 48 kHz, in packets of 1024 samples on one grid from the start. */
export const AUDIO_RATE = 48_000;
export const AUDIO_FRAME = 1024;
export const AUDIO_BITRATE = 128_000;
/** The longest source encoded (docs/encoding.md#long-videos-playable-in-seconds). */
export const MAX_DURATION_SECONDS = 12 * 3600;
/**
 * Display aspect ratios beyond this (wider than 16:1 or taller than 1:16) are refused
 * (docs/encoding.md#hostile-sources-failures-and-deletes).
 */
export const MAX_ASPECT = 16;
/** No rendition side beyond this: H.264's largest level holds 8192×4320. */
export const MAX_SIDE = 8192;
/**
 * The work a background run's first job aims at: one 4 s segment of a 1080p ladder at 30 fps, a
 * few seconds on one core (see `runLength`; the Worker then sizes the video's runs by how long
 * they take, src/encoding/pipeline/coordinator-rules.ts `itemsPerJob`).
 */
const RUN_WORK = 1 * 30 * 4 * (640 * 360 + 1280 * 720 + 1920 * 1080);
export const MAX_RUN_SEGMENTS = 8;
/** Seconds of lead-in decoded before a run's first frame (audio pre-roll, the previous keyframe). */
export const LEAD_IN_SECONDS = 1;
/** Added to every output timestamp, so that no decode timestamp of the first segment is negative. */
export const TIMESTAMP_BASE_SECONDS = 10;
/** What ffmpeg's MPEG-TS muxer adds to every timestamp at its defaults (its mux delay and preload). */
export const MUX_DELAY_SECONDS = 1.4;

/** The MPEG-TS time (seconds) of the video's first frame in every segment: its timeline's start. */
export function timelineStart() {
  return TIMESTAMP_BASE_SECONDS + MUX_DELAY_SECONDS;
}

/** Frame rates players know by name: a probed rate within 1% of one of them becomes it. */
const STANDARD_RATES = /** @type {const} */ ([
  [24000, 1001],
  [24, 1],
  [25, 1],
  [30000, 1001],
  [30, 1],
  [48, 1],
  [50, 1],
  [60000, 1001],
  [60, 1],
]);

/** @typedef {import("./ladder.mjs").Rendition} Rendition */
/** @typedef {{ num: number, den: number }} Rate */
/**
 * What the encoder learnt of a source (its probe job's result). `audioLanguage` is the language
 * tag its audio stream carries, as the file writes it (ISO 639-2, `eng`), null when it carries
 * none or `und`; an encoder from before it leaves it out.
 * @typedef {{
 *   format: string,
 *   duration: number,
 *   startTime: number,
 *   width: number,
 *   height: number,
 *   frameRate: number | null,
 *   videoStream: number,
 *   audioStream: number | null,
 *   interlaced: boolean,
 *   audioLanguage?: string | null,
 * }} Probe
 */
/** @typedef {{ position: import("./settings.mjs").Position, opacity: number }} Watermark */
/**
 * @typedef {{
 *   enabledResolutions: readonly string[],
 *   mp4: boolean,
 *   watermark: Watermark | null,
 * }} PlanSettings
 */
/**
 * A rendition as the plan encodes it: its size, the peak rate its encoder is held to, the H.264
 * level that covers it, and the master playlist's BANDWIDTH and CODECS for it.
 * @typedef {Rendition & { maxrateKbps: number, level: number, bandwidth: number, codecs: string }} PlannedRendition
 */
/**
 * @typedef {{
 *   version: 1,
 *   source: { format: string, startTime: number, offset: number, videoStream: number, audioStream: number | null, interlaced: boolean },
 *   width: number,
 *   height: number,
 *   duration: number,
 *   frameRate: Rate,
 *   framesPerSegment: number,
 *   frames: number,
 *   bFrames: boolean,
 *   renditions: PlannedRendition[],
 *   audio: boolean,
 *   mp4: boolean,
 *   watermark: Watermark | null,
 *   posterTime: number,
 * }} Plan
 */

/** Why a probed source cannot be planned: it is not a video this service encodes. */
export class Unplannable extends Error {
  /** @param {string} reason shown to the video's owner */
  constructor(reason) {
    super(reason);
    this.name = "Unplannable";
  }
}

/**
 * The output frame rate for a probed rate: the nearest standard rate within 1%, else the
 * nearest whole rate, within MIN_FRAME_RATE..MAX_FRAME_RATE (a higher rate is halved until it fits,
 * so 120 becomes 60 and 119.88 becomes 59.94).
 * @param {number | null} probed frames per second, or null when the source does not say
 * @returns {Rate}
 */
export function outputRate(probed) {
  let rate = probed !== null && Number.isFinite(probed) && probed > 0 ? probed : 25;
  while (rate > MAX_FRAME_RATE + 0.5) rate /= 2;
  const distance = (/** @type {readonly [number, number]} */ [num, den]) => Math.abs(rate - num / den) / (num / den);
  const nearest = [...STANDARD_RATES].sort((a, b) => distance(a) - distance(b))[0];
  if (nearest && distance(nearest) <= 0.01) return { num: nearest[0], den: nearest[1] };
  return { num: Math.min(MAX_FRAME_RATE, Math.max(MIN_FRAME_RATE, Math.round(rate))), den: 1 };
}

// H.264 levels (Table A-1): level_idc, max macroblocks a second, max frame size in macroblocks,
// max bit rate of the High profile in kbit/s.
const LEVELS = /** @type {const} */ ([
  [30, 40_500, 1_620, 12_500],
  [31, 108_000, 3_600, 17_500],
  [32, 216_000, 5_120, 25_000],
  [40, 245_760, 8_192, 25_000],
  [41, 245_760, 8_192, 62_500],
  [42, 522_240, 8_704, 62_500],
  [50, 589_824, 22_080, 168_750],
  [51, 983_040, 36_864, 300_000],
  [52, 2_073_600, 36_864, 300_000],
  [60, 4_177_920, 139_264, 300_000],
  [61, 8_355_840, 139_264, 300_000],
  [62, 16_711_680, 139_264, 800_000],
]);

/**
 * The lowest H.264 level whose limits hold a `width`×`height` picture at `rate`, with a peak rate
 * of `kbps` (frame size, macroblock rate, and a side no longer than √(8 × frame size)).
 * @param {number} width @param {number} height @param {Rate} rate @param {number} kbps
 */
export function h264Level(width, height, rate, kbps) {
  const mbWidth = Math.ceil(width / 16);
  const mbHeight = Math.ceil(height / 16);
  const frame = mbWidth * mbHeight;
  const perSecond = (frame * rate.num) / rate.den;
  for (const [level, maxPerSecond, maxFrame, maxKbps] of LEVELS) {
    const maxSide = Math.sqrt(8 * maxFrame);
    if (frame <= maxFrame && perSecond <= maxPerSecond && kbps <= maxKbps && Math.max(mbWidth, mbHeight) <= maxSide) {
      return level;
    }
  }
  return null;
}

// Peak video bit rate (kbit/s) by shorter side, for about 30 frames a second; above 30 the rate
// grows by half. The constant-quality encode stays under it (capped CRF).
const MAX_RATES = /** @type {const} */ ([
  [240, 400],
  [360, 800],
  [480, 1400],
  [720, 2800],
  [1080, 5000],
  [1440, 9000],
  [2160, 16000],
]);

/** @param {number} shortSide @param {Rate} rate */
export function maxrateKbps(shortSide, rate) {
  const row = MAX_RATES.find(([side]) => shortSide <= side) ?? MAX_RATES[MAX_RATES.length - 1];
  const base = /** @type {readonly [number, number]} */ (row)[1];
  return rate.num / rate.den > 31 ? Math.round(base * 1.5) : base;
}

/** What MPEG-TS packaging adds to a stream's rate (PES and TS headers), about 10%. */
const TS_PACKAGING = 1.1;

/**
 * The BANDWIDTH of a rendition: the highest rate a segment can reach. The encoder's buffer holds
 * two seconds at the peak rate, so a segment of `seconds` carries at most (seconds + 2) × peak;
 * audio and the MPEG-TS packaging (about 10%) come on top.
 * @param {number} kbps @param {number} seconds @param {boolean} audio
 */
export function bandwidth(kbps, seconds, audio) {
  const video = (kbps * 1000 * (seconds + 2)) / seconds;
  return Math.ceil((video + (audio ? AUDIO_BITRATE : 0)) * TS_PACKAGING);
}

/**
 * The highest rate an audio-only rendition's segments reach (an added audio track, which a variant
 * plays beside its own segments): the AAC and its MPEG-TS packaging.
 */
export function audioBandwidth() {
  return Math.ceil(AUDIO_BITRATE * TS_PACKAGING);
}

/** The CODECS value (RFC 6381): H.264 High at `level`, and AAC-LC when there is audio. @param {number} level @param {boolean} audio */
export function codecs(level, audio) {
  const avc = `avc1.6400${level.toString(16).padStart(2, "0")}`;
  return audio ? `${avc},mp4a.40.2` : avc;
}

/**
 * How far past the probed duration a clip may end: a span asked for against the duration the
 * video showed (its plan's, whole frames) may pass the probe's by up to a frame.
 */
const CLIP_END_SLACK_SECONDS = 0.1;

/** When the poster frame is taken: 1 s in, or a quarter into a clip shorter than 4 s. @param {number} duration */
export function posterTime(duration) {
  return Number.isFinite(duration) && duration > 0 ? Math.min(1, duration / 4) : 0;
}

/**
 * The plan of a probed source with the settings kept for its encoding, the source cut to
 * `maxDuration` seconds when given (test mode). A clip
 * (docs/import-clips-search.md#clips-as-videos-clipof) is the span of `clip` seconds of the source:
 * its plan starts `clip.start` into the source (`source.offset`, which every run's seek and
 * timestamps add) and lasts the span. Throws Unplannable for a source the service does not encode:
 * longer than 12 hours, an aspect ratio beyond 16:1, a picture too large to encode, or a clip's
 * span past the source's end.
 * @param {Probe} probe
 * @param {PlanSettings} settings
 * @param {{ maxDuration?: number, clip?: { start: number, end: number } | null }} [options]
 * @returns {Plan}
 */
export function planEncoding(probe, settings, options = {}) {
  const clip = options.clip ?? null;
  if (clip && clip.end > probe.duration + CLIP_END_SLACK_SECONDS) {
    throw new Unplannable(`the clip ends at ${clip.end} s, past the source's end at ${probe.duration} s`);
  }
  if (!(probe.duration > 0)) throw new Unplannable("the video has no duration");
  if (probe.duration > MAX_DURATION_SECONDS) throw new Unplannable("the video is longer than 12 hours");
  const aspect = probe.width / probe.height;
  if (aspect > MAX_ASPECT || aspect < 1 / MAX_ASPECT) {
    throw new Unplannable("the picture is wider than 16:1 or taller than 1:16");
  }
  const rate = outputRate(probe.frameRate);
  const perSecond = rate.num / rate.den;
  const framesPerSegment = Math.max(1, Math.round(SEGMENT_TARGET_SECONDS * perSecond));
  const length = clip ? Math.min(clip.end, probe.duration) - clip.start : probe.duration;
  const seconds = Math.min(length, options.maxDuration ?? Number.POSITIVE_INFINITY);
  // Every frame-grid instant before the end is a frame (at least one).
  const frames = Math.max(1, Math.ceil(seconds * perSecond - 1e-6));
  const audio = probe.audioStream !== null;
  const segmentSeconds = framesPerSegment / perSecond;
  const renditions = ladder(probe, settings.enabledResolutions)
    .filter((r) => Math.max(r.width, r.height) <= MAX_SIDE)
    .map((r) => {
      const kbps = maxrateKbps(Math.min(r.width, r.height), rate);
      const level = h264Level(r.width, r.height, rate, kbps);
      return level === null
        ? null
        : {
            ...r,
            maxrateKbps: kbps,
            level,
            bandwidth: bandwidth(kbps, segmentSeconds, audio),
            codecs: codecs(level, audio),
          };
    })
    .filter((r) => r !== null);
  if (renditions.length === 0) throw new Unplannable("the picture is too large to encode");
  const duration = Number(((frames * rate.den) / rate.num).toFixed(3));
  return {
    version: 1,
    source: {
      format: probe.format,
      startTime: probe.startTime,
      offset: clip?.start ?? 0,
      videoStream: probe.videoStream,
      audioStream: probe.audioStream,
      interlaced: probe.interlaced,
    },
    width: probe.width,
    height: probe.height,
    duration,
    frameRate: rate,
    framesPerSegment,
    frames,
    bFrames: perSecond >= B_FRAMES_FROM_RATE,
    renditions,
    audio,
    mp4: settings.mp4,
    watermark: settings.watermark,
    posterTime: posterTime(duration),
  };
}

/** @param {Plan} plan */
export function segmentCount(plan) {
  return Math.ceil(plan.frames / plan.framesPerSegment);
}

/** Seconds at output frame `frame`. @param {Plan} plan @param {number} frame */
export function frameTime(plan, frame) {
  return (frame * plan.frameRate.den) / plan.frameRate.num;
}

/**
 * The output frames of segment `index`: from `first`, `count` of them (the last may be short).
 * @param {Plan} plan @param {number} index
 */
export function segmentFrames(plan, index) {
  const first = index * plan.framesPerSegment;
  return { first, count: Math.min(plan.framesPerSegment, plan.frames - first) };
}

/** A segment's duration in seconds, as its variant playlist lists it. @param {Plan} plan @param {number} index */
export function segmentSeconds(plan, index) {
  return frameTime(plan, segmentFrames(plan, index).count);
}

/**
 * The first audio packet (on the AAC grid: packet j starts at j × 1024 / 48000 s) that belongs to
 * segment `index`. A muxer starts a segment at its keyframe's decode time, which precedes its
 * display time by the B-frame delay; audio packets before that instant stay in the segment before,
 * so a segment encoded alone takes exactly the packets it would have had in a longer run.
 * @param {Plan} plan @param {number} index
 */
export function firstAudioPacket(plan, index) {
  if (index <= 0) return 0;
  if (index >= segmentCount(plan)) return audioPackets(plan);
  const delay = plan.bFrames ? B_FRAME_DELAY : 0;
  return packetFrom(plan, segmentFrames(plan, index).first - delay);
}

/**
 * The first audio packet of segment `index` of an added audio track (an audio-only rendition, see
 * docs/audio-tracks.md): the first packet of the same grid at or after the segment's first frame.
 * With no video in it there is no decode delay to follow, so each segment lasts its video segment's
 * duration to within one packet (21 ms), and lies at the same instants of the same timeline.
 * @param {Plan} plan @param {number} index
 */
export function trackAudioPacket(plan, index) {
  if (index <= 0) return 0;
  if (index >= segmentCount(plan)) return audioPackets(plan);
  return packetFrom(plan, segmentFrames(plan, index).first);
}

/** The first packet of the AAC grid at or after output frame `frame`. @param {Plan} plan @param {number} frame */
function packetFrom(plan, frame) {
  return Math.ceil((frameTime(plan, frame) * AUDIO_RATE) / AUDIO_FRAME - 1e-9);
}

/** Audio packets in all: the grid up to the video's end. @param {Plan} plan */
export function audioPackets(plan) {
  return packetFrom(plan, plan.frames);
}

/**
 * How many segments a background run encodes: one segment's worth of a 1080p ladder, more for
 * cheaper ladders (three of 360p and 720p), fewer for costlier ones but at least one, so a run
 * stays short and the scheduler can be fair.
 * @param {Plan} plan
 */
export function runLength(plan) {
  const pixels = plan.renditions.reduce((sum, r) => sum + r.width * r.height, 0);
  const perSegment = pixels * plan.framesPerSegment;
  return Math.max(1, Math.min(MAX_RUN_SEGMENTS, Math.round(RUN_WORK / perSegment)));
}

/** The highest rendition: the MP4's and the poster's size. @param {Plan} plan */
export function topRendition(plan) {
  return /** @type {PlannedRendition} */ (plan.renditions[plan.renditions.length - 1]);
}
