// @ts-check
// The messages between the Worker and the encoder (PROTOCOL.md, version 2), validated by hand:
// every field checked, unknown fields refused, `version` required. Both sides use this module:
// the Worker checks every job it sends and every message it receives with it, the encoder every
// job it receives and every message it sends. (Plain JavaScript with no dependencies, so the
// container image needs only Debian's Node.js.)

import { MIN_STILL_WIDTH, storyboard } from "./pictures.mjs";
import { MAX_DURATION_SECONDS, MAX_SIDE } from "./plan.mjs";
import { POSITIONS, RESOLUTIONS } from "./settings.mjs";

export const PROTOCOL_VERSION = /** @type {const} */ (2);
export const JOB_KINDS = /** @type {const} */ ([
  "probe",
  "segments",
  "still",
  "tiles",
  "storyboard",
  "mp4",
  "m4a",
  "speech",
  "audio",
]);
/** Who hears a speech job's audio: the encoder's own engine, or the Worker it sends the audio to. */
export const RECOGNIZERS = /** @type {const} */ (["encoder", "worker"]);
export const PRIORITIES = /** @type {const} */ (["interactive", "background"]);
export const FAILURE_CODES = /** @type {const} */ (["invalid_source", "encoding_failed", "interrupted"]);
export { POSITIONS, RESOLUTIONS };

/** @typedef {(typeof JOB_KINDS)[number]} JobKind */
/** @typedef {(typeof PRIORITIES)[number]} Priority */
/** @typedef {(typeof FAILURE_CODES)[number]} FailureCode */
/** @typedef {import("./plan.mjs").Plan} Plan */
/** @typedef {import("./plan.mjs").Probe} Probe */
/** @typedef {{ baseUrl: string, token: string }} Callback */
/** @typedef {{ version: 2, jobId: string, priority: Priority, callback: Callback }} JobBase */
/** @typedef {JobBase & { kind: "probe" }} ProbeJob */
/** @typedef {JobBase & { kind: "segments", plan: Plan, from: number, to: number, renditions: string[] }} SegmentsJob */
/** @typedef {JobBase & { kind: "still", plan: Plan, time: number, width: number | null }} StillJob */
/** @typedef {JobBase & { kind: "tiles", plan: Plan, from: number, to: number }} TilesJob */
/** @typedef {JobBase & { kind: "storyboard", plan: Plan }} StoryboardJob */
/**
 * One part of a file put together from the stored segments (PROTOCOL.md, "Files in parts"): part
 * `part` (of `partSize` bytes but the last) from segment `from`, up to `to` when given.
 * @typedef {JobBase & {
 *   kind: "mp4" | "m4a",
 *   plan: Plan,
 *   partSize: number,
 *   part: number,
 *   from: number,
 *   to: number | null,
 *   sequence: number,
 *   origin: number | null,
 * }} FileJob
 */
/** @typedef {FileJob & { kind: "mp4" }} Mp4Job */
/** @typedef {FileJob & { kind: "m4a" }} M4aJob */
/** @typedef {(typeof RECOGNIZERS)[number]} Recognizer */
/**
 * Hear the words said in seconds `from` to `to` of the video (a chunk of at most MAX_SPEECH_SECONDS),
 * in `language` (the engine's code).
 * @typedef {JobBase & { kind: "speech", plan: Plan, language: string, from: number, to: number, recognizer: Recognizer }} SpeechJob
 */
/**
 * Make segments `from` to `to` (exclusive) of an added audio track: the first audio stream of the
 * job's source (the track's own file, not the video's), cut at the plan's segments as audio-only
 * MPEG-TS (docs/audio-tracks.md).
 * @typedef {JobBase & { kind: "audio", plan: Plan, from: number, to: number }} AudioJob
 */
/** @typedef {ProbeJob | SegmentsJob | StillJob | TilesJob | StoryboardJob | Mp4Job | M4aJob | SpeechJob | AudioJob} Job */
/** A word heard, its times in seconds of the video. @typedef {{ text: string, start: number, end: number }} Word */
/** @typedef {{ version: 2, jobId: string, progress: number }} Heartbeat */
/** @typedef {{ partNumber: number, etag: string }} Part */
/**
 * A fragment of a file as the file's index lists it: its bytes, and each track's first time in it
 * (in the track's own time scale, on the file's time line).
 * @typedef {{ size: number, times: number[] }} Fragment
 */
/**
 * What one part's job made: the segment it stopped before (`to`), its fragments, where the file's
 * time line starts (`origin`: the earliest timestamp of the first part's segments, 90 kHz), and
 * the part's ETag (null when the first part only measured its segments).
 * @typedef {{ to: number, fragments: Fragment[], origin: number, etag: string | null }} FilePart
 * @typedef {{ version: 2, jobId: string, status: "done", probe?: Probe, mp4?: FilePart, m4a?: FilePart, speech?: { words: Word[] } }} DoneResult
 */
/** @typedef {{ version: 2, jobId: string, status: "failed", code: FailureCode, message: string }} FailedResult */
/** @typedef {DoneResult | FailedResult} Result */

/** A message that does not match its shape; `path` names the field at fault. */
export class ProtocolError extends Error {
  /** @param {string} path @param {string} problem */
  constructor(path, problem) {
    super(`${path || "message"}: ${problem}`);
    this.name = "ProtocolError";
    this.path = path;
  }
}

const JOB_ID = /^[A-Za-z0-9_-]{1,64}$/;
const TOKEN = /^[\x21-\x7e]{16,512}$/;
const RESOLUTION = /^[1-9][0-9]{0,4}p$/;
export const MAX_MESSAGE_BYTES = 64 * 1024;
/**
 * No request between the encoder and the Worker carries more than this
 * (docs/encoding.md#long-videos-playable-in-seconds).
 */
export const MAX_REQUEST_BYTES = 50 * 1024 * 1024;
/** R2's smallest part but the last. */
export const MIN_PART_BYTES = 5 * 1024 * 1024;
const MAX_SEGMENTS = 100_000;
/** R2's most parts in one upload. */
export const MAX_PARTS = 10_000;
const MAX_TILES = 1000;
/** The longest span one speech job hears: a few seconds of work, and Whisper's own window. */
export const MAX_SPEECH_SECONDS = 30;
/** The most words one speech job reports (a fast talker says about 200 a minute). */
export const MAX_WORDS = 2_000;
const LANGUAGE = /^[a-z]{2,3}$/;

/**
 * The object at `path` with exactly the keys of `shape` (each checked by its function), none other.
 * @template {Record<string, (value: unknown, path: string) => unknown>} S
 * @param {unknown} value
 * @param {string} path
 * @param {S} shape
 * @returns {{ [K in keyof S]: ReturnType<S[K]> }}
 */
function object(value, path, shape) {
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new ProtocolError(path, "must be an object");
  }
  const record = /** @type {Record<string, unknown>} */ (value);
  for (const key of Object.keys(record)) {
    if (!Object.hasOwn(shape, key)) throw new ProtocolError(join(path, key), "unknown field");
  }
  /** @type {Record<string, unknown>} */
  const out = {};
  for (const [key, check] of Object.entries(shape)) {
    if (!Object.hasOwn(record, key) && !OPTIONAL.has(check)) throw new ProtocolError(join(path, key), "required");
    out[key] = check(record[key], join(path, key));
  }
  return /** @type {{ [K in keyof S]: ReturnType<S[K]> }} */ (out);
}

/** The checks of fields that may be left out (`withDefault`). */
const OPTIONAL = new WeakSet();

/**
 * A field that may be left out, which then reads as `fallback`: for a field added to a message that
 * older writers (a plan stored before it) do not have.
 * @template T
 * @param {(value: unknown, path: string) => T} check
 * @param {T} fallback
 */
function withDefault(check, fallback) {
  /** @param {unknown} value @param {string} path @returns {T} */
  const optional = (value, path) => (value === undefined ? fallback : check(value, path));
  OPTIONAL.add(optional);
  return optional;
}

/** @param {string} path @param {string} key */
function join(path, key) {
  return path ? `${path}.${key}` : key;
}

/** @param {unknown} value @param {string} path @returns {2} */
function version(value, path) {
  if (value !== PROTOCOL_VERSION) throw new ProtocolError(path, `must be ${PROTOCOL_VERSION}`);
  return PROTOCOL_VERSION;
}

/** @param {RegExp} pattern @param {string} what */
function matching(pattern, what) {
  /** @param {unknown} value @param {string} path @returns {string} */
  return (value, path) => {
    if (typeof value !== "string" || !pattern.test(value)) throw new ProtocolError(path, `must be ${what}`);
    return value;
  };
}

/**
 * @template {string} T
 * @param {readonly T[]} values
 */
function oneOf(values) {
  /** @param {unknown} value @param {string} path @returns {T} */
  return (value, path) => {
    if (typeof value !== "string" || !values.includes(/** @type {T} */ (value))) {
      throw new ProtocolError(path, `must be one of ${values.join(", ")}`);
    }
    return /** @type {T} */ (value);
  };
}

/** @param {number} min @param {number} max */
function integer(min, max) {
  /** @param {unknown} value @param {string} path @returns {number} */
  return (value, path) => {
    if (typeof value !== "number" || !Number.isInteger(value) || value < min || value > max) {
      throw new ProtocolError(path, `must be an integer from ${min} to ${max}`);
    }
    return value;
  };
}

/** @param {number} min @param {number} max */
function number(min, max) {
  /** @param {unknown} value @param {string} path @returns {number} */
  return (value, path) => {
    if (typeof value !== "number" || !Number.isFinite(value) || value < min || value > max) {
      throw new ProtocolError(path, `must be a number from ${min} to ${max}`);
    }
    return value;
  };
}

/**
 * @template T
 * @param {(value: unknown, path: string) => T} check
 */
function nullable(check) {
  /** @param {unknown} value @param {string} path @returns {T | null} */
  return (value, path) => (value === null ? null : check(value, path));
}

/** @param {number} min @param {number} max */
function text(min, max) {
  /** @param {unknown} value @param {string} path @returns {string} */
  return (value, path) => {
    const ok = typeof value === "string" && value.length >= min && value.length <= max;
    // No control characters: the message may be shown on one line of a dashboard.
    if (!ok || [...value].some((c) => c.charCodeAt(0) < 0x20 || c.charCodeAt(0) === 0x7f)) {
      throw new ProtocolError(path, `must be ${min} to ${max} characters without control characters`);
    }
    return value;
  };
}

/** @param {unknown} value @param {string} path @returns {boolean} */
function boolean(value, path) {
  if (typeof value !== "boolean") throw new ProtocolError(path, "must be true or false");
  return value;
}

/**
 * @template T
 * @param {(item: unknown, path: string) => T} check
 * @param {{ min: number, max: number, unique?: boolean }} size
 */
function array(check, size) {
  /** @param {unknown} value @param {string} path @returns {T[]} */
  return (value, path) => {
    if (!Array.isArray(value)) throw new ProtocolError(path, "must be an array");
    if (value.length < size.min || value.length > size.max) {
      throw new ProtocolError(path, `must have ${size.min} to ${size.max} items`);
    }
    const items = value.map((item, index) => check(item, join(path, String(index))));
    if (size.unique && new Set(items).size !== items.length) throw new ProtocolError(path, "must not repeat an item");
    return items;
  };
}

/** @param {unknown} value @param {string} path @returns {string} */
function baseUrl(value, path) {
  if (typeof value !== "string" || value.length > 2048) throw new ProtocolError(path, "must be a URL");
  /** @type {URL} */
  let url;
  try {
    url = new URL(value);
  } catch {
    throw new ProtocolError(path, "must be an absolute URL");
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") throw new ProtocolError(path, "must be http or https");
  if (url.username || url.password || url.search || url.hash || value.includes("?") || value.includes("#")) {
    throw new ProtocolError(path, "must have no credentials, query or fragment");
  }
  return value.replace(/\/+$/, "");
}

const jobId = matching(JOB_ID, "1 to 64 letters, digits, '_' or '-'");
const side = integer(2, MAX_SIDE);
const seconds = number(0, MAX_DURATION_SECONDS);

/** @param {unknown} value @param {string} path @returns {import("./plan.mjs").PlannedRendition} */
function plannedRendition(value, path) {
  return object(value, path, {
    resolution: matching(RESOLUTION, "a label such as 720p"),
    width: side,
    height: side,
    maxrateKbps: integer(1, 1_000_000),
    level: integer(10, 62),
    bandwidth: integer(1, 2_000_000_000),
    codecs: matching(/^avc1\.6400[0-9a-f]{2}(,mp4a\.40\.2)?$/, "an H.264 High CODECS value"),
  });
}

/**
 * An encoding plan (plan.mjs) as a job carries it. The Worker made it; the encoder checks its
 * shape and bounds before it turns it into ffmpeg arguments.
 * @param {unknown} value @param {string} path @returns {Plan}
 */
export function parsePlan(value, path = "plan") {
  const plan = object(value, path, {
    version: (v, p) => {
      if (v !== 1) throw new ProtocolError(p, "must be 1");
      return /** @type {1} */ (1);
    },
    source: (v, p) =>
      object(v, p, {
        format: matching(/^[a-z0-9_]{1,32}$/, "a demuxer name"),
        startTime: number(-1e9, 1e9),
        offset: withDefault(seconds, 0),
        videoStream: integer(0, 1000),
        audioStream: nullable(integer(0, 1000)),
        interlaced: boolean,
      }),
    width: integer(1, 65535),
    height: integer(1, 65535),
    duration: seconds,
    frameRate: (v, p) => object(v, p, { num: integer(1, 240_000), den: integer(1, 1001) }),
    framesPerSegment: integer(1, 1000),
    frames: integer(1, MAX_DURATION_SECONDS * 60 + 1),
    bFrames: boolean,
    renditions: array(plannedRendition, { min: 1, max: RESOLUTIONS.length }),
    audio: boolean,
    mp4: boolean,
    watermark: nullable((v, p) => object(v, p, { position: oneOf(POSITIONS), opacity: number(0, 1) })),
    posterTime: seconds,
  });
  if (Math.ceil(plan.frames / plan.framesPerSegment) > MAX_SEGMENTS) throw new ProtocolError(path, "too many segments");
  return plan;
}

/**
 * A job as the Worker posts it to `POST /v2/jobs`; throws ProtocolError when it is not one.
 * @param {unknown} value
 * @returns {Job}
 */
export function parseJob(value) {
  const kind = typeof value === "object" && value !== null ? /** @type {{ kind?: unknown }} */ (value).kind : null;
  const base = {
    version,
    jobId,
    kind: oneOf(JOB_KINDS),
    priority: oneOf(PRIORITIES),
    callback: (/** @type {unknown} */ v, /** @type {string} */ p) =>
      object(v, p, { baseUrl, token: matching(TOKEN, "16 to 512 printable ASCII characters without spaces") }),
  };
  switch (kind) {
    case "probe":
      return /** @type {ProbeJob} */ (object(value, "", base));
    case "segments": {
      const job = /** @type {SegmentsJob} */ (
        object(value, "", {
          ...base,
          plan: parsePlan,
          from: integer(0, MAX_SEGMENTS),
          to: integer(1, MAX_SEGMENTS),
          renditions: array(matching(RESOLUTION, "a label such as 720p"), {
            min: 1,
            max: RESOLUTIONS.length,
            unique: true,
          }),
        })
      );
      checkSpan(job);
      for (const [i, label] of job.renditions.entries()) {
        if (!job.plan.renditions.some((r) => r.resolution === label)) {
          throw new ProtocolError(`renditions.${i}`, "must be one of the plan's renditions");
        }
      }
      return job;
    }
    case "still": {
      const job = /** @type {StillJob} */ (
        object(value, "", {
          ...base,
          plan: parsePlan,
          time: seconds,
          width: nullable(integer(MIN_STILL_WIDTH, MAX_SIDE)),
        })
      );
      if (job.time > job.plan.duration) throw new ProtocolError("time", "must be within the video");
      return job;
    }
    case "tiles": {
      const job = /** @type {TilesJob} */ (
        object(value, "", { ...base, plan: parsePlan, from: integer(0, MAX_TILES), to: integer(1, MAX_TILES) })
      );
      if (job.to <= job.from || job.to > storyboard(job.plan).cues.length) {
        throw new ProtocolError("to", "must be after from and within the storyboard's cues");
      }
      return job;
    }
    case "storyboard":
      return /** @type {StoryboardJob} */ (object(value, "", { ...base, plan: parsePlan }));
    case "mp4":
    case "m4a": {
      const job = /** @type {FileJob} */ (
        object(value, "", {
          ...base,
          plan: parsePlan,
          partSize: integer(MIN_PART_BYTES, MAX_REQUEST_BYTES),
          part: integer(1, MAX_PARTS),
          from: integer(0, MAX_SEGMENTS),
          to: nullable(integer(1, MAX_SEGMENTS)),
          sequence: integer(1, 2 ** 32 - 1),
          origin: nullable(integer(0, 2 ** 33)),
        })
      );
      const count = Math.ceil(job.plan.frames / job.plan.framesPerSegment);
      if (job.from >= count) throw new ProtocolError("from", "must be within the plan's segments");
      if (job.to !== null && (job.to <= job.from || job.to > count)) {
        throw new ProtocolError("to", "must be after from and within the plan's segments");
      }
      if ((job.part === 1) !== (job.origin === null) || (job.part === 1) !== (job.from === 0)) {
        throw new ProtocolError("part", "the first part starts at segment 0 and has no origin; every other has one");
      }
      if (job.kind === "m4a" && !job.plan.audio) {
        throw new ProtocolError("plan.audio", "must be true: a silent video has no M4A");
      }
      return /** @type {Mp4Job | M4aJob} */ (job);
    }
    case "speech": {
      const job = /** @type {SpeechJob} */ (
        object(value, "", {
          ...base,
          plan: parsePlan,
          language: matching(LANGUAGE, "a language code such as en"),
          from: seconds,
          to: seconds,
          recognizer: oneOf(RECOGNIZERS),
        })
      );
      if (job.to <= job.from || job.to - job.from > MAX_SPEECH_SECONDS || job.to > job.plan.duration + 1e-6) {
        throw new ProtocolError("to", `must be after from, at most ${MAX_SPEECH_SECONDS} s later, within the video`);
      }
      if (!job.plan.audio) throw new ProtocolError("plan.audio", "must be true: a silent video has no speech");
      return job;
    }
    case "audio": {
      const job = /** @type {AudioJob} */ (
        object(value, "", { ...base, plan: parsePlan, from: integer(0, MAX_SEGMENTS), to: integer(1, MAX_SEGMENTS) })
      );
      return checkSpan(job);
    }
    default:
      throw new ProtocolError("kind", `must be one of ${JOB_KINDS.join(", ")}`);
  }
}

/**
 * A job of segments `from` to `to` (exclusive), checked to be segments of its plan.
 * @template {SegmentsJob | AudioJob} J
 * @param {J} job
 * @returns {J}
 */
function checkSpan(job) {
  if (job.to <= job.from || job.to > Math.ceil(job.plan.frames / job.plan.framesPerSegment)) {
    throw new ProtocolError("to", "must be after from and within the plan's segments");
  }
  return job;
}

/**
 * @param {unknown} value
 * @returns {Heartbeat}
 */
export function parseHeartbeat(value) {
  return object(value, "", { version, jobId, progress: number(0, 1) });
}

/** @param {unknown} value @param {string} path @returns {Probe} */
function probeFacts(value, path) {
  return object(value, path, {
    format: matching(/^[a-z0-9_]{1,32}$/, "a demuxer name"),
    duration: number(0, 366 * 24 * 3600),
    startTime: number(-1e9, 1e9),
    width: integer(1, 65535),
    height: integer(1, 65535),
    frameRate: nullable(number(0, 1_000_000)),
    videoStream: integer(0, 1000),
    audioStream: nullable(integer(0, 1000)),
    interlaced: boolean,
    audioLanguage: withDefault(nullable(matching(LANGUAGE, "a language code such as eng")), null),
  });
}

/**
 * A result as the encoder posts it to `${baseUrl}/result`.
 * @param {unknown} value
 * @returns {Result}
 */
export function parseResult(value) {
  const record = typeof value === "object" && value !== null ? /** @type {Record<string, unknown>} */ (value) : {};
  if (record.status === "failed") {
    return object(value, "", {
      version,
      jobId,
      status: oneOf(/** @type {const} */ (["failed"])),
      code: oneOf(FAILURE_CODES),
      message: text(1, 500),
    });
  }
  if (record.status !== "done") throw new ProtocolError("status", "must be done or failed");
  const shape = { version, jobId, status: oneOf(/** @type {const} */ (["done"])) };
  if ("probe" in record) return object(value, "", { ...shape, probe: probeFacts });
  if ("mp4" in record) return object(value, "", { ...shape, mp4: filePart });
  if ("m4a" in record) return object(value, "", { ...shape, m4a: filePart });
  if ("speech" in record) return object(value, "", { ...shape, speech: (v, p) => object(v, p, { words: parseWords }) });
  return object(value, "", shape);
}

/**
 * Words heard, in order of their start: a speech job's result, and the Worker's answer to the audio
 * a job sends it (`PUT speech`).
 * @param {unknown} value @param {string} [path] @returns {Word[]}
 */
export function parseWords(value, path = "words") {
  const words = array((item, at) => object(item, at, { text: text(1, 100), start: seconds, end: seconds }), {
    min: 0,
    max: MAX_WORDS,
  })(value, path);
  for (const [i, word] of words.entries()) {
    if (word.end < word.start) throw new ProtocolError(`${path}.${i}.end`, "must not be before start");
    if (i > 0 && word.start < /** @type {Word} */ (words[i - 1]).start) {
      throw new ProtocolError(`${path}.${i}.start`, "must not be before the word before it");
    }
  }
  return words;
}

/**
 * The fragments of a file's index: each one's size and its tracks' first times.
 * @param {unknown} value @param {string} path @returns {Fragment[]}
 */
export function parseFragments(value, path = "fragments") {
  const fragment = (/** @type {unknown} */ item, /** @type {string} */ at) =>
    object(item, at, {
      size: integer(8, MAX_REQUEST_BYTES),
      times: array(integer(0, Number.MAX_SAFE_INTEGER), { min: 1, max: 2 }),
    });
  return array(fragment, { min: 0, max: 4 * MAX_SEGMENTS })(value, path);
}

/**
 * What an MP4 or M4A job made of its part (`FilePart`).
 * @param {unknown} value @param {string} path @returns {FilePart}
 */
function filePart(value, path) {
  return object(value, path, {
    to: integer(1, MAX_SEGMENTS),
    fragments: (v, p) => {
      const fragments = parseFragments(v, p);
      if (fragments.length === 0) throw new ProtocolError(p, "must have 1 or more items");
      return fragments;
    },
    origin: integer(0, 2 ** 33),
    etag: nullable(text(1, 200)),
  });
}

/** The name of segment `index` of a rendition, as its variant playlist lists it. @param {number} index */
export function segmentName(index) {
  return `seg_${String(index).padStart(5, "0")}.ts`;
}

/** The segment index a name such as `seg_00012.ts` stands for, or null. @param {string} name */
export function segmentIndex(name) {
  const match = /^seg_([0-9]{5,6})\.ts$/.exec(name);
  return match ? Number(match[1]) : null;
}
