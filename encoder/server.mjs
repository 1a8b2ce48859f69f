// @ts-check
// The encoder's HTTP service (media-plan/PROTOCOL.md): job intake, status, cancel, health. It runs up to
// ENCODER_INTERACTIVE_JOBS interactive jobs (probes, a viewer's on-demand segments, stills) and up
// to ENCODER_BACKGROUND_JOBS background ones (segment runs, MP4s) at once; past that a job is
// refused with 503, for the Worker's scheduler to place it later. Every /v2 request carries the
// ENCODER_TOKEN the encoder was started with.
// Run: `ENCODER_TOKEN=… node encoder/server.mjs` (ENCODER_PORT, default 8788).

import { createHash, timingSafeEqual } from "node:crypto";
import { createServer } from "node:http";
import { availableParallelism, tmpdir } from "node:os";
import { pathToFileURL } from "node:url";
import { MAX_MESSAGE_BYTES, PRIORITIES, PROTOCOL_VERSION, ProtocolError, parseJob } from "../media-plan/protocol.mjs";
import { describeBinaries, resolveBinaries } from "./binaries.mjs";
import { RunningJob } from "./job.mjs";
import { describeSpeech, INSTALL_SPEECH, locateSpeech } from "./speech.mjs";
import { background, endLeftovers } from "./yielding.mjs";

/** @typedef {import("./job.mjs").JobDeps} JobDeps */
/** @typedef {import("../media-plan/protocol.mjs").Priority} Priority */
/** @typedef {import("node:http").IncomingMessage} IncomingMessage */
/** @typedef {import("node:http").ServerResponse} ServerResponse */
/** @typedef {JobDeps & { token: string, capacity: Record<Priority, number> }} ServerDeps */

const RETRY_AFTER_SECONDS = 2;

/** @param {ServerResponse} res @param {number} status @param {unknown} [body] */
function send(res, status, body) {
  if (body === undefined) {
    res.writeHead(status).end();
    return;
  }
  const text = JSON.stringify(body);
  res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(text) });
  res.end(text);
}

/** @param {ServerResponse} res @param {number} status @param {string} code @param {string} message @param {Record<string, unknown>} [extra] */
function error(res, status, code, message, extra = {}) {
  send(res, status, { error: { code, message, ...extra } });
}

/**
 * The body as text, or null when it is longer than `limit` bytes.
 * @param {IncomingMessage} req
 * @param {number} limit
 */
async function readBody(req, limit) {
  const chunks = [];
  let size = 0;
  for await (const chunk of req) {
    size += chunk.length;
    if (size > limit) return null;
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString("utf8");
}

/**
 * @param {ServerDeps} deps
 */
export function createEncoderServer(deps) {
  if (!deps.token) throw new Error("the encoder needs a token (ENCODER_TOKEN): its job API accepts no call without it");
  /** @type {Map<string, RunningJob>} The jobs at work: each takes a place of its priority. */
  const jobs = new Map();
  /**
   * Jobs whose work is over and whose result is on its way (retried for up to half a minute): they
   * take no place, but are still this encoder's, so the Worker asking about one is told it runs.
   * @type {Map<string, RunningJob>}
   */
  const reporting = new Map();
  let closing = false;

  /** @param {Priority} priority */
  const running = (priority) => [...jobs.values()].filter((job) => job.job.priority === priority).length;

  /** @param {IncomingMessage} req @param {ServerResponse} res */
  const postJob = async (req, res) => {
    const type = (req.headers["content-type"] ?? "").split(";")[0]?.trim().toLowerCase();
    if (type !== "application/json") {
      error(res, 415, "unsupported_media_type", "send the job as application/json");
      return;
    }
    const text = await readBody(req, MAX_MESSAGE_BYTES);
    if (text === null) {
      error(res, 413, "payload_too_large", `a job is at most ${MAX_MESSAGE_BYTES} bytes`);
      return;
    }
    /** @type {unknown} */
    let value;
    try {
      value = JSON.parse(text);
    } catch {
      error(res, 400, "invalid_json", "the body is not JSON");
      return;
    }
    /** @type {import("../media-plan/protocol.mjs").Job} */
    let job;
    try {
      job = parseJob(value);
    } catch (e) {
      if (!(e instanceof ProtocolError)) throw e;
      error(res, 400, "invalid_job", e.message, { path: e.path });
      return;
    }
    if (jobs.has(job.jobId) || reporting.has(job.jobId)) {
      error(res, 409, "job_running", "this encoder is already running that job", { jobId: job.jobId });
      return;
    }
    if (closing || running(job.priority) >= deps.capacity[job.priority]) {
      res.setHeader("retry-after", String(RETRY_AFTER_SECONDS));
      error(
        res,
        503,
        "busy",
        closing ? "this encoder is shutting down" : `this encoder runs all the ${job.priority} jobs it can`,
      );
      return;
    }
    const report = () => {
      if (jobs.get(job.jobId) !== started) return;
      jobs.delete(job.jobId);
      reporting.set(job.jobId, started);
    };
    // A viewer's work (and a probe) stops the background work until its own is over, however it
    // ends (yielding.mjs).
    let holding = job.priority === "interactive";
    if (holding) background.hold();
    const release = () => {
      if (holding) background.release();
      holding = false;
    };
    const started = new RunningJob(job, deps, () => {
      release();
      report();
    });
    jobs.set(job.jobId, started);
    started.done.finally(() => {
      release();
      if (jobs.get(job.jobId) === started) jobs.delete(job.jobId);
      if (reporting.get(job.jobId) === started) reporting.delete(job.jobId);
    });
    send(res, 202, { version: PROTOCOL_VERSION, jobId: job.jobId, status: "accepted" });
  };

  /** @param {RunningJob} job */
  const status = (job) => ({
    version: PROTOCOL_VERSION,
    jobId: job.id,
    kind: job.job.kind,
    progress: Number(job.progress.toFixed(4)),
  });

  /** @param {IncomingMessage} req @param {ServerResponse} res */
  const handle = async (req, res) => {
    const url = new URL(req.url ?? "/", "http://encoder");
    const method = req.method ?? "GET";
    if (url.pathname === "/healthz") {
      if (method !== "GET" && method !== "HEAD") return methodNotAllowed(res, "GET, HEAD");
      send(res, 200, {
        status: closing ? "closing" : "ok",
        protocol: PROTOCOL_VERSION,
        running: Object.fromEntries(PRIORITIES.map((p) => [p, running(p)])),
        capacity: deps.capacity,
        ffmpeg: deps.binaries.ffmpeg.version,
        ffprobe: deps.binaries.ffprobe.version,
        speech: describeSpeech(deps.speech),
      });
      return;
    }
    if (!url.pathname.startsWith("/v2/")) return error(res, 404, "not_found", "no such route");
    if (!sameSecret(req.headers.authorization ?? "", `Bearer ${deps.token}`)) {
      error(res, 401, "unauthorized", "a valid bearer token is required");
      return;
    }
    if (url.pathname === "/v2/jobs") {
      if (method !== "POST") return methodNotAllowed(res, "POST");
      await postJob(req, res);
      return;
    }
    const match = /^\/v2\/jobs\/([^/]+)$/.exec(url.pathname);
    if (!match) return error(res, 404, "not_found", "no such route");
    const id = /** @type {string} */ (match[1]);
    const job = jobs.get(id) ?? reporting.get(id);
    if (method === "GET") {
      if (!job) return error(res, 404, "not_found", "this encoder is not running that job");
      send(res, 200, status(job));
      return;
    }
    if (method === "DELETE") {
      if (!job) return error(res, 404, "not_found", "this encoder is not running that job");
      await job.cancel("cancelled by DELETE");
      send(res, 204);
      return;
    }
    return methodNotAllowed(res, "GET, DELETE");
  };

  const server = createServer((req, res) => {
    handle(req, res).catch((e) => {
      deps.log(`request ${req.method} ${req.url} failed: ${e instanceof Error ? e.stack : String(e)}`);
      if (!res.headersSent) error(res, 500, "internal_error", "the encoder failed to answer");
      else res.destroy();
    });
  });

  return {
    server,
    jobs,
    /**
     * Stops taking jobs and interrupts the running ones, which are reported `interrupted` so
     * the Worker runs them again without waiting for their silence.
     */
    async shutdown() {
      closing = true;
      await Promise.all([...jobs.values()].map((job) => job.interrupt("the encoder is shutting down")));
      await new Promise((resolve) => {
        server.close(resolve);
        server.closeIdleConnections();
      });
    },
  };
}

/** Compared as digests, so the time taken tells nothing of the secret. @param {string} a @param {string} b */
function sameSecret(a, b) {
  const digest = (/** @type {string} */ s) => createHash("sha256").update(s).digest();
  return timingSafeEqual(digest(a), digest(b));
}

/** @param {ServerResponse} res @param {string} allow */
function methodNotAllowed(res, allow) {
  res.setHeader("allow", allow);
  error(res, 405, "method_not_allowed", `allowed: ${allow}`);
}

/**
 * @param {NodeJS.ProcessEnv} env
 * @param {string} name
 * @param {number} fallback
 * @param {number} min
 */
function intEnv(env, name, fallback, min) {
  const raw = env[name];
  if (raw === undefined || raw === "") return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min) throw new Error(`${name} must be an integer of at least ${min}`);
  return value;
}

/** @param {string} line */
function log(line) {
  process.stdout.write(`[encoder] ${line}\n`);
}

async function main() {
  const env = process.env;
  const port = intEnv(env, "ENCODER_PORT", 8788, 0);
  const host = env.ENCODER_HOST || "127.0.0.1";
  const cores = availableParallelism();
  const binaries = await resolveBinaries(env);
  log(`using ${describeBinaries(binaries)}`);
  const leftovers = await endLeftovers([binaries.ffmpeg.path, binaries.ffprobe.path]);
  if (leftovers.length > 0)
    log(`ended ${leftovers.length} stopped ffmpeg left by an encoder that died: ${leftovers.join(", ")}`);
  const speech = locateSpeech(env);
  log(
    speech
      ? `speech: pocketsphinx at ${speech.program} (${speech.languages.join(", ")})`
      : `speech: none (generated captions need Workers AI, or this engine: ${INSTALL_SPEECH})`,
  );
  const encoder = createEncoderServer({
    binaries,
    speech,
    tempRoot: env.ENCODER_TMPDIR || tmpdir(),
    // Decoder, filter and each x264 encoder get this many threads: enough for the machine, and a
    // bound on the frames in flight (an 8K source's frames are 50 MB each).
    threads: intEnv(env, "ENCODER_THREADS", Math.min(cores, 4), 1),
    heartbeatMs: intEnv(env, "ENCODER_HEARTBEAT_MS", 5_000, 50),
    capacity: {
      interactive: intEnv(env, "ENCODER_INTERACTIVE_JOBS", cores, 1),
      background: intEnv(env, "ENCODER_BACKGROUND_JOBS", cores, 1),
    },
    token: env.ENCODER_TOKEN ?? "",
    log,
  });
  encoder.server.listen(port, host, () => {
    const address = encoder.server.address();
    const bound = typeof address === "object" && address ? address.port : port;
    log(`listening on http://${host}:${bound} (protocol ${PROTOCOL_VERSION})`);
  });
  let stopping = false;
  for (const signal of /** @type {const} */ (["SIGTERM", "SIGINT"])) {
    process.on(signal, () => {
      if (stopping) return;
      stopping = true;
      log(`${signal}: shutting down`);
      encoder.shutdown().then(() => process.exit(0));
    });
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().catch((e) => {
    log(`cannot start: ${e instanceof Error ? e.message : String(e)}`);
    process.exit(1);
  });
}
