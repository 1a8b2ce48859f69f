// @ts-check
// The encoder's side of the callback API (PROTOCOL.md): everything it asks of the Worker, under
// the job's `callback.baseUrl` with its bearer token. Bodies stream from and to files, with a
// Content-Length (R2 needs a known length to store a stream).

import { createReadStream, createWriteStream } from "node:fs";
import { stat } from "node:fs/promises";
import http from "node:http";
import https from "node:https";
import { pipeline } from "node:stream/promises";
import { sleep } from "./abort.mjs";
import { contentType, isOutputPath, parseHeartbeat, parseResult } from "./protocol.mjs";

/** @typedef {import("./protocol.mjs").Heartbeat} Heartbeat */
/** @typedef {import("./protocol.mjs").Result} Result */
/** @typedef {import("node:http").IncomingMessage} IncomingMessage */

/** The Worker answered 410 Gone: this attempt is no longer wanted; stop without a word. */
export class AttemptGone extends Error {
  constructor() {
    super("the Worker answered 410: the attempt is void");
    this.name = "AttemptGone";
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

const USER_AGENT = "video-encoder/1";
const IDLE_TIMEOUT_MS = 60_000;
const HEARTBEAT_TIMEOUT_MS = 10_000;

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
        if (signal.aborted || error instanceof AttemptGone || (error instanceof CallbackFailed && !retryable(error))) {
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
    const text = await readSome(response);
    if (status === 410) throw new AttemptGone();
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

  return {
    /**
     * Streams `${baseUrl}/<what>` (the source or the watermark image) into `file`.
     * @param {"source" | "watermark"} what
     * @param {string} file
     */
    async download(what, file) {
      await withRetries(`GET /${what}`, async () => {
        const response = await expect(`GET /${what}`, await request("GET", what), [200]);
        await pipeline(response, createWriteStream(file), { signal });
      });
    },

    /**
     * PUTs `file` to `${baseUrl}/outputs/<path>`.
     * @param {string} path
     * @param {string} file
     */
    async upload(path, file) {
      if (!isOutputPath(path)) throw new RangeError(`not an output path: ${path}`);
      const { size } = await stat(file);
      await withRetries(`PUT /outputs/${path}`, async () => {
        const response = await request("PUT", `outputs/${path}`, {
          headers: { "content-type": contentType(path), "content-length": size },
          body: () => createReadStream(file),
        });
        await expect(`PUT /outputs/${path}`, response, [200, 201, 204]);
        response.resume();
      });
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
     * The result, retried for about half a minute: the Worker takes the attempt over if it never
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

/** The start of a response body, for a log line. @param {IncomingMessage} response */
async function readSome(response) {
  let text = "";
  response.setEncoding("utf8");
  for await (const chunk of response) {
    if (text.length < 1000) text += chunk;
  }
  return text;
}
