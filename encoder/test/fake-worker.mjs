// @ts-check
// A stand-in for the Worker's side of the protocol (media-plan/PROTOCOL.md, version 2): serves a source (with
// byte ranges, as the Worker serves it from R2) and a watermark under /jobs/<jobId>/, keeps the
// segments (a rendition's or an audio track's), stills, storyboard tiles and file parts it is sent on
// disk under <root>/<video>/ (the first segment stored under a name stays, as in the Worker) and
// serves the segments and tiles back, serves a file's index as the test gives it (`index`), answers
// a speech job's audio with the words the test gives it (`heard`), records every call with the size
// of its body, and validates heartbeats and results with the protocol's own parsers.

import { createHash } from "node:crypto";
import { existsSync } from "node:fs";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { createServer } from "node:http";
import { dirname, join } from "node:path";
import { parseHeartbeat, parseResult } from "../../media-plan/protocol.mjs";

/** @typedef {import("../../media-plan/protocol.mjs").Heartbeat} Heartbeat */
/** @typedef {import("../../media-plan/protocol.mjs").Result} Result */
/** @typedef {{ method: string, path: string, status: number, bytes: number, at: number }} Call */
/**
 * @typedef {{
 *   video: string,
 *   source: Buffer,
 *   watermark: Buffer | null,
 *   token: string,
 *   heartbeats: Heartbeat[],
 *   stored: string[],
 *   results: Result[],
 *   resultReceived: Promise<Result>,
 *   onHeartbeat?: (heartbeat: Heartbeat) => number | undefined,
 *   onStore?: (path: string) => number | undefined,
 *   sourceStatus?: number,
 *   index?: import("../../media-plan/protocol.mjs").Fragment[],
 *   heard?: import("../../media-plan/protocol.mjs").Word[],
 *   speechAudio?: Buffer,
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
 * The byte range a Range header asks of `size` bytes, or null for the whole.
 * @param {string | undefined} header @param {number} size
 */
function range(header, size) {
  const match = /^bytes=(\d*)-(\d*)$/.exec(header ?? "");
  if (!match) return null;
  const [, first = "", last = ""] = match;
  if (first === "") return { start: Math.max(0, size - Number(last)), end: size - 1 };
  return { start: Number(first), end: last === "" ? size - 1 : Math.min(size - 1, Number(last)) };
}

/**
 * @param {string} root where stored files go, as <root>/<video>/<path>
 */
export async function startFakeWorker(root) {
  /** @type {Map<string, FakeJob>} */
  const jobs = new Map();
  /** @type {Call[]} */
  const calls = [];
  /** @type {string[]} */
  const problems = [];
  /** @type {Map<string, (result: Result) => void>} */
  const resolveResult = new Map();

  const server = createServer(async (req, res) => {
    const url = new URL(req.url ?? "/", "http://fake");
    const match = /^\/jobs\/([^/]+)\/(.+)$/.exec(url.pathname);
    const job = match ? jobs.get(/** @type {string} */ (match[1])) : undefined;
    let bytes = 0;
    /** @param {number} status @param {string | Buffer} [text] @param {Record<string, string | number>} [headers] */
    const answer = (status, text, headers = {}) => {
      calls.push({ method: req.method ?? "", path: url.pathname, status, bytes, at: Date.now() });
      res.writeHead(status, { "content-type": "text/plain", ...headers }).end(text);
    };
    if (!match || !job) return answer(404, "no such job");
    if (req.headers.authorization !== `Bearer ${job.token}`) return answer(401, "bad token");
    const jobId = /** @type {string} */ (match[1]);
    const what = /** @type {string} */ (match[2]);
    const videoDir = join(root, job.video);
    try {
      if (what === "source" || what === "watermark") {
        if (req.method !== "GET") return answer(405);
        const data = what === "source" ? job.source : job.watermark;
        if (!data) return answer(404, "no watermark");
        if (what === "source" && job.sourceStatus) return answer(job.sourceStatus, "refused");
        const wanted = range(req.headers.range, data.length);
        if (wanted && wanted.start >= data.length)
          return answer(416, "", { "content-range": `bytes */${data.length}` });
        const slice = wanted ? data.subarray(wanted.start, wanted.end + 1) : data;
        const headers = {
          "content-type": "application/octet-stream",
          "content-length": slice.length,
          "accept-ranges": "bytes",
        };
        if (wanted) Object.assign(headers, { "content-range": `bytes ${wanted.start}-${wanted.end}/${data.length}` });
        return answer(wanted ? 206 : 200, slice, headers);
      }
      if (what === "heartbeat") {
        const text = await body(req);
        bytes = text.length;
        const heartbeat = parseHeartbeat(JSON.parse(text.toString("utf8")));
        job.heartbeats.push(heartbeat);
        return answer(job.onHeartbeat?.(heartbeat) ?? 204);
      }
      if (what === "result") {
        const text = await body(req);
        bytes = text.length;
        const result = parseResult(JSON.parse(text.toString("utf8")));
        job.results.push(result);
        answer(204);
        resolveResult.get(jobId)?.(result);
        return;
      }
      if (req.method === "GET" && /^(mp4|m4a)\/index$/.test(what)) {
        return answer(200, JSON.stringify({ fragments: job.index ?? [] }), { "content-type": "application/json" });
      }
      if (what === "speech") {
        // The Worker's side of a speech job heard elsewhere (Workers AI): it keeps the audio it was
        // sent and answers the words the test gave it.
        if (req.method !== "PUT") return answer(405);
        const data = await body(req);
        bytes = data.length;
        job.speechAudio = data;
        return answer(200, JSON.stringify({ words: job.heard ?? [] }), { "content-type": "application/json" });
      }
      const stored =
        /^(segments\/[0-9]+p\/seg_[0-9]+\.ts|audio\/seg_[0-9]+\.ts|still|tiles\/[0-9]+|(?:mp4|m4a)\/parts\/[0-9]+)$/.exec(
          what,
        )?.[1];
      if (!stored) return answer(404, "no such callback");
      const file = join(videoDir, stored === "still" ? `still-${jobId}.jpg` : stored);
      if (req.method === "GET" && (stored.startsWith("segments/") || stored.startsWith("tiles/"))) {
        if (!existsSync(file)) return answer(404, `no such ${stored}`);
        const data = await readFile(file);
        const type = stored.startsWith("tiles/") ? "image/jpeg" : "video/mp2t";
        return answer(200, data, { "content-type": type, "content-length": data.length });
      }
      if (req.method !== "PUT") return answer(405);
      const length = Number(req.headers["content-length"]);
      const data = await body(req);
      bytes = data.length;
      if (data.length !== length) problems.push(`${stored}: content-length ${length}, received ${data.length}`);
      const status = job.onStore?.(stored);
      if (status) return answer(status);
      job.stored.push(stored);
      if (/^(segments|audio)\//.test(stored) && existsSync(file)) return answer(204);
      await mkdir(dirname(file), { recursive: true });
      await writeFile(file, data);
      if (stored.startsWith("mp4/") || stored.startsWith("m4a/")) {
        const etag = createHash("md5").update(data).digest("hex");
        return answer(200, JSON.stringify({ etag }), { "content-type": "application/json" });
      }
      return answer(204);
    } catch (error) {
      problems.push(`${url.pathname}: ${error instanceof Error ? error.message : String(error)}`);
      return answer(400, "invalid message");
    }
  });

  await new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve(undefined)));
  const address = server.address();
  if (!address || typeof address !== "object") throw new Error("no address");
  const origin = `http://127.0.0.1:${address.port}`;

  return {
    origin,
    root,
    calls,
    problems,
    /**
     * Registers a job the encoder will call back about; files it stores go under <root>/<video>/.
     * @param {string} jobId
     * @param {Partial<FakeJob> & { source: Buffer }} init
     */
    addJob(jobId, init) {
      /** @type {(result: Result) => void} */
      let onResult = () => {};
      const job = /** @type {FakeJob} */ ({
        video: jobId,
        watermark: null,
        token: TOKEN,
        heartbeats: [],
        stored: [],
        results: [],
        ...init,
        resultReceived: new Promise((resolve) => {
          onResult = resolve;
        }),
      });
      resolveResult.set(jobId, onResult);
      jobs.set(jobId, job);
      return { job, callback: { baseUrl: `${origin}/jobs/${jobId}`, token: job.token } };
    },
    /** Where a stored file of `video` is. @param {string} video @param {string} path */
    file(video, path) {
      return join(root, video, path);
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
