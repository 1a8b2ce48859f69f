// @ts-check
// The messages between the Worker and the encoder (PROTOCOL.md), validated by hand: every field
// checked, unknown fields refused, `version` required. The Worker validates the same shapes with
// its own schemas; the encoder validates what it receives and, before sending, what it sends.

import { RESOLUTIONS } from "./ladder.mjs";

export const PROTOCOL_VERSION = /** @type {const} */ (1);
export const POSITIONS = /** @type {const} */ (["top-left", "top-right", "bottom-left", "bottom-right", "center"]);
export const STAGES = /** @type {const} */ (["downloading", "probing", "encoding", "uploading"]);
export const FAILURE_CODES = /** @type {const} */ (["invalid_source", "encoding_failed"]);

/** @typedef {(typeof POSITIONS)[number]} Position */
/** @typedef {(typeof STAGES)[number]} Stage */
/** @typedef {(typeof FAILURE_CODES)[number]} FailureCode */
/** @typedef {import("./ladder.mjs").Resolution} Resolution */
/** @typedef {import("./ladder.mjs").Rendition} Rendition */
/** @typedef {{ position: Position, opacity: number }} Watermark */
/**
 * @typedef {{
 *   version: 1,
 *   jobId: string,
 *   attempt: number,
 *   callback: { baseUrl: string, token: string },
 *   settings: { enabledResolutions: Resolution[], mp4: boolean, watermark: Watermark | null },
 * }} Job
 */
/** @typedef {{ version: 1, jobId: string, attempt: number, stage: Stage, progress: number }} Heartbeat */
/**
 * @typedef {{
 *   version: 1, jobId: string, attempt: number, status: "ready",
 *   duration: number, width: number, height: number, hasAudio: boolean,
 *   renditions: Rendition[], files: string[], mp4: boolean, poster: string,
 *   peakMemoryBytes: number | null,
 * }} ReadyResult
 */
/** @typedef {{ version: 1, jobId: string, attempt: number, status: "failed", code: FailureCode, message: string }} FailedResult */
/** @typedef {ReadyResult | FailedResult} Result */

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
// A file the encoder uploads: up to 4 levels of names made of letters, digits, `.`, `_` and `-`,
// none starting with `.` (so never `..`).
const FILE_PATH = /^(?:[A-Za-z0-9_-][A-Za-z0-9._-]{0,63}\/){0,3}[A-Za-z0-9_-][A-Za-z0-9._-]{0,63}$/;
export const MAX_MESSAGE_BYTES = 64 * 1024;
const MAX_FILES = 100_000;

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
    if (!Object.hasOwn(record, key)) throw new ProtocolError(join(path, key), "required");
    out[key] = check(record[key], join(path, key));
  }
  return /** @type {{ [K in keyof S]: ReturnType<S[K]> }} */ (out);
}

/** @param {string} path @param {string} key */
function join(path, key) {
  return path ? `${path}.${key}` : key;
}

/** @param {unknown} value @param {string} path @returns {1} */
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
 * @param {unknown} value
 * @param {string} path
 * @param {(item: unknown, path: string) => T} check
 * @param {{ min: number, max: number, unique?: boolean }} size
 * @returns {T[]}
 */
function array(value, path, check, size) {
  if (!Array.isArray(value)) throw new ProtocolError(path, "must be an array");
  if (value.length < size.min || value.length > size.max) {
    throw new ProtocolError(path, `must have ${size.min} to ${size.max} items`);
  }
  const items = value.map((item, index) => check(item, join(path, String(index))));
  if (size.unique && new Set(items).size !== items.length) throw new ProtocolError(path, "must not repeat an item");
  return items;
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
const attempt = integer(1, 1000);

/**
 * A job as the Worker posts it to `POST /v1/jobs`; throws ProtocolError when it is not one.
 * @param {unknown} value
 * @returns {Job}
 */
export function parseJob(value) {
  return object(value, "", {
    version,
    jobId,
    attempt,
    callback: (v, p) =>
      object(v, p, { baseUrl, token: matching(TOKEN, "16 to 512 printable ASCII characters without spaces") }),
    settings: (v, p) =>
      object(v, p, {
        enabledResolutions: (list, at) => array(list, at, oneOf(RESOLUTIONS), { min: 1, max: 7, unique: true }),
        mp4: boolean,
        watermark: (w, at) =>
          w === null ? null : object(w, at, { position: oneOf(POSITIONS), opacity: number(0, 1) }),
      }),
  });
}

/**
 * @param {unknown} value
 * @returns {Heartbeat}
 */
export function parseHeartbeat(value) {
  return object(value, "", { version, jobId, attempt, stage: oneOf(STAGES), progress: number(0, 1) });
}

/** @param {unknown} value @param {string} path @returns {Rendition} */
function rendition(value, path) {
  return object(value, path, {
    resolution: matching(/^[1-9][0-9]{0,4}p$/, "a label such as 720p"),
    width: integer(2, 16384),
    height: integer(2, 16384),
  });
}

/**
 * A result as the encoder posts it to `${baseUrl}/result`.
 * @param {unknown} value
 * @returns {Result}
 */
export function parseResult(value) {
  const status =
    typeof value === "object" && value !== null ? /** @type {{ status?: unknown }} */ (value).status : null;
  if (status === "failed") {
    return object(value, "", {
      version,
      jobId,
      attempt,
      status: oneOf(/** @type {const} */ (["failed"])),
      code: oneOf(FAILURE_CODES),
      message: text(1, 500),
    });
  }
  if (status !== "ready") throw new ProtocolError("status", "must be ready or failed");
  const result = object(value, "", {
    version,
    jobId,
    attempt,
    status: oneOf(/** @type {const} */ (["ready"])),
    duration: number(0, 7 * 24 * 3600),
    width: integer(1, 65535),
    height: integer(1, 65535),
    hasAudio: boolean,
    renditions: (v, p) => array(v, p, rendition, { min: 1, max: 7 }),
    files: (v, p) => array(v, p, matching(FILE_PATH, "a relative file path"), { min: 1, max: MAX_FILES, unique: true }),
    mp4: boolean,
    poster: matching(FILE_PATH, "a relative file path"),
    peakMemoryBytes: (v, p) => (v === null ? null : integer(0, Number.MAX_SAFE_INTEGER)(v, p)),
  });
  for (const required of ["master.m3u8", result.poster, ...(result.mp4 ? ["video.mp4"] : [])]) {
    if (!result.files.includes(required)) throw new ProtocolError("files", `must include ${required}`);
  }
  return result;
}

/** @param {string} path a file path the encoder uploads, relative to `${baseUrl}/outputs/` */
export function isOutputPath(path) {
  return FILE_PATH.test(path);
}

/** Content-Type of each kind of output file, by extension. */
export const CONTENT_TYPES = /** @type {const} */ ({
  ".m3u8": "application/vnd.apple.mpegurl",
  ".ts": "video/mp2t",
  ".mp4": "video/mp4",
  ".jpg": "image/jpeg",
});

/** @param {string} path */
export function contentType(path) {
  const extension = path.slice(path.lastIndexOf("."));
  const type = /** @type {Record<string, string>} */ (CONTENT_TYPES)[extension];
  if (!type) throw new RangeError(`no content type for ${path}`);
  return type;
}
