// @ts-check
// A stand-in for the Worker's side of the protocol: serves a source and a watermark under
// /jobs/<jobId>/, records every call, validates heartbeats and results with the protocol's own
// parsers, and keeps uploaded outputs on disk so tests can ffprobe them.

import { mkdir, writeFile } from "node:fs/promises";
import { createServer } from "node:http";
import { dirname, join } from "node:path";
import { parseHeartbeat, parseResult } from "../protocol.mjs";

/** @typedef {import("../protocol.mjs").Heartbeat} Heartbeat */
/** @typedef {import("../protocol.mjs").Result} Result */
/** @typedef {{ method: string, path: string, status: number, at: number }} Call */
/** @typedef {{ path: string, contentType: string, bytes: number }} Upload */
/**
 * @typedef {{
 *   source: Buffer,
 *   watermark: Buffer | null,
 *   token: string,
 *   heartbeats: Heartbeat[],
 *   uploads: Upload[],
 *   results: Result[],
 *   resultReceived: Promise<Result>,
 *   firstUpload: Promise<void>,
 *   onHeartbeat?: (heartbeat: Heartbeat) => number | undefined,
 *   onUpload?: (path: string) => number | undefined,
 *   sourceStatus?: number,
 * }} FakeJob
 */

export const TOKEN = "test-token-0123456789abcdef";

/** @param {import("node:http").IncomingMessage} req */
async function body(req) {
  const chunks = [];
  for await (const chunk of req) chunks.push(chunk);
  return Buffer.concat(chunks);
}

/**
 * @param {string} outputRoot where uploads are written, as <root>/<jobId>/<path>
 */
export async function startFakeWorker(outputRoot) {
  /** @type {Map<string, FakeJob>} */
  const jobs = new Map();
  /** @type {Call[]} */
  const calls = [];
  /** @type {string[]} */
  const problems = [];

  const server = createServer(async (req, res) => {
    const url = new URL(req.url ?? "/", "http://fake");
    const match = /^\/jobs\/([^/]+)\/(source|watermark|heartbeat|result|outputs\/(.+))$/.exec(url.pathname);
    const job = match ? jobs.get(/** @type {string} */ (match[1])) : undefined;
    /** @param {number} status @param {string} [text] */
    const answer = (status, text) => {
      calls.push({ method: req.method ?? "", path: url.pathname, status, at: Date.now() });
      res.writeHead(status, { "content-type": "text/plain" }).end(text);
    };
    if (!match || !job) return answer(404, "no such job");
    if (req.headers.authorization !== `Bearer ${job.token}`) return answer(401, "bad token");
    const jobId = /** @type {string} */ (match[1]);
    const what = /** @type {string} */ (match[2]);
    try {
      if (what === "source" || what === "watermark") {
        if (req.method !== "GET") return answer(405);
        const data = what === "source" ? job.source : job.watermark;
        if (!data) return answer(404, "no watermark");
        if (what === "source" && job.sourceStatus) return answer(job.sourceStatus, "refused");
        calls.push({ method: "GET", path: url.pathname, status: 200, at: Date.now() });
        res.writeHead(200, { "content-type": "application/octet-stream", "content-length": data.length }).end(data);
        return;
      }
      if (what === "heartbeat") {
        const heartbeat = parseHeartbeat(JSON.parse((await body(req)).toString("utf8")));
        job.heartbeats.push(heartbeat);
        return answer(job.onHeartbeat?.(heartbeat) ?? 204);
      }
      if (what === "result") {
        const result = parseResult(JSON.parse((await body(req)).toString("utf8")));
        job.results.push(result);
        answer(204);
        resolveResult.get(jobId)?.(result);
        return;
      }
      const path = /** @type {string} */ (match[3]);
      if (req.method !== "PUT") return answer(405);
      const length = Number(req.headers["content-length"]);
      const data = await body(req);
      if (data.length !== length) problems.push(`${path}: content-length ${length}, received ${data.length}`);
      const status = job.onUpload?.(path);
      if (status) return answer(status);
      const file = join(outputRoot, jobId, path);
      await mkdir(dirname(file), { recursive: true });
      await writeFile(file, data);
      job.uploads.push({ path, contentType: String(req.headers["content-type"]), bytes: data.length });
      resolveUpload.get(jobId)?.();
      return answer(201);
    } catch (error) {
      problems.push(`${url.pathname}: ${error instanceof Error ? error.message : String(error)}`);
      return answer(400, "invalid message");
    }
  });

  /** @type {Map<string, (result: Result) => void>} */
  const resolveResult = new Map();
  /** @type {Map<string, () => void>} */
  const resolveUpload = new Map();
  await new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve(undefined)));
  const address = server.address();
  if (!address || typeof address !== "object") throw new Error("no address");
  const origin = `http://127.0.0.1:${address.port}`;

  return {
    origin,
    calls,
    problems,
    /**
     * Registers a job the encoder will call back about.
     * @param {string} jobId
     * @param {Partial<FakeJob> & { source: Buffer }} init
     */
    addJob(jobId, init) {
      /** @type {(result: Result) => void} */
      let onResult = () => {};
      /** @type {() => void} */
      let onUpload = () => {};
      const job = /** @type {FakeJob} */ ({
        watermark: null,
        token: TOKEN,
        heartbeats: [],
        uploads: [],
        results: [],
        ...init,
        resultReceived: new Promise((resolve) => {
          onResult = resolve;
        }),
        firstUpload: new Promise((resolve) => {
          onUpload = resolve;
        }),
      });
      resolveResult.set(jobId, onResult);
      resolveUpload.set(jobId, onUpload);
      jobs.set(jobId, job);
      return { job, callback: { baseUrl: `${origin}/jobs/${jobId}`, token: job.token } };
    },
    close() {
      return new Promise((resolve) => {
        server.close(() => resolve(undefined));
        server.closeAllConnections();
      });
    },
  };
}

/** @typedef {Awaited<ReturnType<typeof startFakeWorker>>} FakeWorker */
