// @ts-check
// The encoder's side of the callback API (media-plan/PROTOCOL.md): everything it asks of the Worker, under
// the job's `callback.baseUrl` with its bearer token. Every request body is bounded
// (MAX_REQUEST_BYTES), streamed from a file or a buffer with a Content-Length (R2 stores only a
// stream of known length). ffmpeg and ffprobe read the source themselves (`source`).

import { createReadStream, createWriteStream } from "node:fs";
import { stat } from "node:fs/promises";
import http from "node:http";
import https from "node:https";
import { pipeline } from "node:stream/promises";
import {
  MAX_REQUEST_BYTES,
  parseFragments,
  parseHeartbeat,
  parseResult,
  parseWords,
  segmentName,
} from "../media-plan/protocol.mjs";
import { sleep } from "./abort.mjs";

/** @typedef {import("../media-plan/protocol.mjs").Heartbeat} Heartbeat */
/** @typedef {import("../media-plan/protocol.mjs").Result} Result */
/** @typedef {import("node:http").IncomingMessage} IncomingMessage */

/** The Worker answered 410 Gone: this job is no longer wanted; stop without a word. */
export class JobGone extends Error {
  constructor() {
    super("the Worker answered 410: the job is void");
    this.name = "JobGone";
  }
}

/** A callback failed for good (after its retries). */
export class CallbackFailed extends Error {
  /** @param {string} message @param {number} [status] the Worker's answer, when there was one */
  constructor(message, status) {
    super(message);
    this.name = "CallbackFailed";
    this.status = status;
  }
}

const USER_AGENT = "video-encoder/2";
const IDLE_TIMEOUT_MS = 60_000;
const HEARTBEAT_TIMEOUT_MS = 10_000;
/** The largest answer a PUT reads: the words a speech job's audio holds (a part's answer is an ETag). */
const ANSWER_LIMIT = 512 * 1024;

/**
 * @typedef {{
 *   baseUrl: string,
 *   token: string,
 *   signal: AbortSignal,
 *   retryDelaysMs?: number[],
 * }} ClientOptions
 */

/**
 * @param {ClientOptions} options
 */
export function callbackClient(options) {
  const retryDelays = options.retryDelaysMs ?? [500, 2_000, 5_000];
  const { signal } = options;

  /**
   * One request; resolves with the response once its headers arrive.
   * @param {string} method
   * @param {string} path
   * @param {{ headers?: Record<string, string | number>, body?: () => NodeJS.ReadableStream | Buffer, idleMs?: number }} [init]
   * @returns {Promise<IncomingMessage>}
   */
  const request = (method, path, init = {}) =>
    new Promise((resolve, reject) => {
      const url = new URL(`${options.baseUrl}/${path}`);
      const transport = url.protocol === "https:" ? https : http;
      const req = transport.request(url, {
        method,
        signal,
        headers: { authorization: `Bearer ${options.token}`, "user-agent": USER_AGENT, ...init.headers },
      });
      req.setTimeout(init.idleMs ?? IDLE_TIMEOUT_MS, () => req.destroy(new Error(`${method} /${path}: no answer`)));
      req.on("response", resolve);
      req.on("error", reject);
      const body = init.body?.();
      if (!body) req.end();
      else if (Buffer.isBuffer(body)) req.end(body);
      else pipeline(body, req).catch(reject);
    });

  /**
   * Runs `attempt` until it succeeds, retrying network errors and 5xx/429 answers.
   * @template T
   * @param {string} what
   * @param {() => Promise<T>} attempt
   * @param {number[]} delays
   * @returns {Promise<T>}
   */
  const withRetries = async (what, attempt, delays = retryDelays) => {
    for (let i = 0; ; i++) {
      try {
        return await attempt();
      } catch (error) {
        if (signal.aborted || error instanceof JobGone || (error instanceof CallbackFailed && !retryable(error))) {
          throw error;
        }
        const delay = delays[i];
        if (delay === undefined) {
          throw error instanceof CallbackFailed ? error : new CallbackFailed(`${what}: ${describe(error)}`);
        }
        await sleep(delay, signal);
      }
    }
  };

  /**
   * Checks a response's status, draining its body when it is not wanted.
   * @param {string} what
   * @param {IncomingMessage} response
   * @param {number[]} ok
   */
  const expect = async (what, response, ok) => {
    const status = response.statusCode ?? 0;
    if (ok.includes(status)) return response;
    const text = await readAll(response, 1000);
    if (status === 410) throw new JobGone();
    throw new CallbackFailed(`${what}: HTTP ${status} ${text.slice(0, 200)}`, status);
  };

  /**
   * @param {string} path
   * @param {unknown} message
   * @param {number} [idleMs]
   */
  const postJson = async (path, message, idleMs) => {
    const body = Buffer.from(JSON.stringify(message));
    const response = await request("POST", path, {
      headers: { "content-type": "application/json", "content-length": body.length },
      body: () => body,
      idleMs,
    });
    await expect(`POST /${path}`, response, [200, 202, 204]);
    response.resume();
  };

  /**
   * PUTs a file or a buffer, at most MAX_REQUEST_BYTES; resolves with the answer's body.
   * @param {string} path
   * @param {string} type
   * @param {{ file: string } | { buffer: Buffer }} body
   */
  const put = async (path, type, body) => {
    const size = "file" in body ? (await stat(body.file)).size : body.buffer.length;
    if (size > MAX_REQUEST_BYTES) throw new CallbackFailed(`PUT /${path}: ${size} bytes is over the request limit`);
    return withRetries(`PUT /${path}`, async () => {
      const response = await request("PUT", path, {
        headers: { "content-type": type, "content-length": size },
        body: () => ("file" in body ? createReadStream(body.file) : body.buffer),
      });
      await expect(`PUT /${path}`, response, [200, 201, 204]);
      return readAll(response, ANSWER_LIMIT);
    });
  };

  return {
    /** Where ffmpeg and ffprobe read the source (by range, with this token). */
    source: { url: `${options.baseUrl}/source`, token: options.token },

    /**
     * Streams the watermark image into `file`.
     * @param {string} file
     */
    async downloadWatermark(file) {
      await withRetries("GET /watermark", async () => {
        const response = await expect("GET /watermark", await request("GET", "watermark"), [200]);
        await pipeline(response, createWriteStream(file), { signal });
      });
    },

    /**
     * Stores segment `index` of `resolution`. The first segment stored under a name stays: a later
     * one (another run made it too) is answered 204 and dropped by the Worker.
     * @param {string} resolution @param {number} index @param {string} file
     */
    async putSegment(resolution, index, file) {
      await put(`segments/${resolution}/${segmentName(index)}`, "video/mp2t", { file });
    },

    /**
     * Stores segment `index` of the added audio track the job makes (the Worker knows which, and
     * drops one stored already, as for a rendition's).
     * @param {number} index @param {string} file
     */
    async putAudioSegment(index, file) {
      await put(`audio/${segmentName(index)}`, "video/mp2t", { file });
    },

    /**
     * A stored segment's bytes, as a stream (the MP4 job reads them in order).
     * @param {string} resolution @param {number} index
     * @returns {Promise<IncomingMessage>}
     */
    async getSegment(resolution, index) {
      const path = `segments/${resolution}/${segmentName(index)}`;
      return withRetries(`GET /${path}`, async () => expect(`GET /${path}`, await request("GET", path), [200]));
    },

    /** Stores the still (JPEG) the job made. @param {string} file */
    async putStill(file) {
      await put("still", "image/jpeg", { file });
    },

    /** Stores storyboard tile `cue` (a JPEG). @param {number} cue @param {string} file */
    async putTile(cue, file) {
      await put(`tiles/${cue}`, "image/jpeg", { file });
    },

    /** Writes storyboard tile `cue`, as stored, to `file`. @param {number} cue @param {string} file */
    async downloadTile(cue, file) {
      await withRetries(`GET /tiles/${cue}`, async () => {
        const response = await expect(`GET /tiles/${cue}`, await request("GET", `tiles/${cue}`), [200]);
        await pipeline(response, createWriteStream(file), { signal });
      });
    },

    /**
     * The fragments of every part of the file but the first, in order (the first part's index
     * lists them).
     * @param {"mp4" | "m4a"} file
     */
    async getIndex(file) {
      return withRetries(`GET /${file}/index`, async () => {
        const response = await expect(`GET /${file}/index`, await request("GET", `${file}/index`), [200]);
        return parseFragments(JSON.parse(await readAll(response, Number.POSITIVE_INFINITY)).fragments);
      });
    },

    /**
     * Stores one part of the MP4 (or of the M4A); resolves with its ETag.
     * @param {number} partNumber @param {Buffer} bytes @param {"mp4" | "m4a"} [file]
     */
    async putPart(partNumber, bytes, file = "mp4") {
      const type = file === "mp4" ? "video/mp4" : "audio/mp4";
      const answer = await put(`${file}/parts/${partNumber}`, type, { buffer: bytes });
      const etag = /** @type {{ etag?: unknown }} */ (JSON.parse(answer)).etag;
      if (typeof etag !== "string") throw new CallbackFailed(`PUT /${file}/parts/${partNumber}: no etag in the answer`);
      return etag;
    },

    /**
     * Sends the audio of a speech job (WAV) to the Worker, which hears it (Workers AI): the words,
     * their times in seconds of that audio.
     * @param {string} file
     */
    async hearSpeech(file) {
      const answer = await put("speech", "audio/wav", { file });
      return parseWords(JSON.parse(answer).words);
    },

    /**
     * One heartbeat, not retried (the next one follows in a few seconds), and given up after 10 s
     * without an answer (the result waits for it).
     * @param {Heartbeat} heartbeat
     */
    async heartbeat(heartbeat) {
      await postJson("heartbeat", parseHeartbeat(heartbeat), HEARTBEAT_TIMEOUT_MS);
    },

    /**
     * The result, retried for about half a minute: the Worker takes the job over if it never
     * arrives.
     * @param {Result} result
     */
    async result(result) {
      const checked = parseResult(result);
      await withRetries("POST /result", () => postJson("result", checked), [1_000, 2_000, 4_000, 8_000, 16_000]);
    },
  };
}

/** @typedef {ReturnType<typeof callbackClient>} CallbackClient */

/** @param {CallbackFailed} error */
function retryable(error) {
  const status = error.status;
  return status === undefined || status >= 500 || status === 429 || status === 408;
}

/** @param {unknown} error */
function describe(error) {
  return error instanceof Error ? error.message : String(error);
}

/** A response's body as text, at most `limit` characters kept. @param {IncomingMessage} response @param {number} limit */
async function readAll(response, limit) {
  let text = "";
  response.setEncoding("utf8");
  for await (const chunk of response) {
    if (text.length < limit) text += chunk;
  }
  return text.slice(0, limit);
}
