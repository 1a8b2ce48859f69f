// @ts-check
// One attempt of one job: fetch the source (and watermark) → probe → one ffmpeg run → check and
// upload the outputs → report. Heartbeats go out every few seconds meanwhile. A cancel (DELETE
// /v1/jobs/<id>, or a callback answered 410) kills ffmpeg, aborts the requests in flight and
// reports nothing; every other failure is reported. The job's temporary folder is always removed.

import { mkdir, mkdtemp, rm } from "node:fs/promises";
import { join } from "node:path";
import { AttemptGone, callbackClient } from "./callback.mjs";
import { runFfmpeg } from "./encode.mjs";
import { ffmpegArgs, posterTime } from "./ffmpeg-args.mjs";
import { ladder } from "./ladder.mjs";
import { finishOutputs, POSTER } from "./outputs.mjs";
import { probe } from "./probe.mjs";
import { PROTOCOL_VERSION } from "./protocol.mjs";

/** @typedef {import("./protocol.mjs").Job} Job */
/** @typedef {import("./protocol.mjs").Stage} Stage */
/** @typedef {import("./protocol.mjs").Result} Result */
/** @typedef {import("./binaries.mjs").Binaries} Binaries */
/**
 * @typedef {{
 *   binaries: Binaries,
 *   tempRoot: string,
 *   threads: number,
 *   heartbeatMs: number,
 *   uploadConcurrency: number,
 *   retryDelaysMs?: number[],
 *   log: (line: string) => void,
 * }} JobDeps
 */
/** @typedef {"ready" | "failed" | "cancelled"} Outcome */

// Where the overall progress stands at the start of each stage; encoding moves it from 0.05 to 0.9.
const STAGE_START = /** @type {const} */ ({ downloading: 0, probing: 0.05, encoding: 0.05, uploading: 0.9 });
const ENCODING_SHARE = 0.85;
const UPLOAD_SHARE = 0.1;

/** Messages the video's owner may see (the contract's `error.message`); details go to the log. */
const MESSAGES = {
  encodingFailed: "The video could not be encoded.",
  /** @param {string} reason */
  invalidSource: (reason) => `The source is not a decodable video: ${reason}.`,
};

export class RunningJob {
  /**
   * @param {Job} job
   * @param {JobDeps} deps
   */
  constructor(job, deps) {
    this.job = job;
    this.deps = deps;
    /** @type {Stage} */
    this.stage = "downloading";
    this.progress = 0;
    this.startedAt = Date.now();
    // Aborting `controller` stops the work; aborting `silence` as well means nothing is reported.
    this.controller = new AbortController();
    this.silence = new AbortController();
    /** @type {Promise<Outcome>} */
    this.done = this.run();
  }

  get id() {
    return this.job.jobId;
  }

  /** Stops the job: ffmpeg killed, requests aborted, nothing more sent. Resolves once it has stopped. */
  async cancel(reason = "cancelled") {
    this.silence.abort(new Error(reason));
    this.controller.abort(new Error(reason));
    await this.done;
  }

  /**
   * Stops the job's work and reports it failed (`encoding_failed`, so the Worker retries it
   * elsewhere at once): for an encoder that is shutting down. Resolves once it has stopped.
   * @param {string} reason
   */
  async interrupt(reason) {
    this.controller.abort(new Error(reason));
    await this.done;
  }

  /** @param {string} line */
  log(line) {
    this.deps.log(`job ${this.job.jobId}#${this.job.attempt} ${line}`);
  }

  /** @param {Stage} stage @param {number} progress */
  advance(stage, progress) {
    this.stage = stage;
    this.progress = Math.max(this.progress, Math.min(1, progress));
  }

  /** @returns {Promise<Outcome>} */
  async run() {
    const { job, deps } = this;
    const signal = this.controller.signal;
    const client = callbackClient({ ...job.callback, signal, retryDelaysMs: deps.retryDelaysMs });
    const reporter = callbackClient({
      ...job.callback,
      signal: this.silence.signal,
      retryDelaysMs: deps.retryDelaysMs,
    });
    /** @type {Promise<void>} */
    let lastBeat = Promise.resolve();
    const beat = () => {
      const message = { ...this.identity(), stage: this.stage, progress: Number(this.progress.toFixed(4)) };
      lastBeat = client.heartbeat(message).catch((error) => {
        if (error instanceof AttemptGone) {
          this.log("heartbeat answered 410: stopping");
          this.silence.abort(error);
          this.controller.abort(error);
        } else if (!signal.aborted) this.log(`heartbeat failed: ${error.message}`);
      });
    };
    const heartbeat = setInterval(beat, deps.heartbeatMs);
    beat();
    this.log("started");
    /** @type {Result} */
    let result;
    /** @type {string | null} */
    let dir = null;
    try {
      dir = await mkdtemp(join(deps.tempRoot, `encoder-${job.jobId}-`));
      result = await this.work(client, dir);
    } catch (error) {
      // A callback answered 410: the Worker has given this attempt up, so it hears nothing more.
      if (error instanceof AttemptGone) this.silence.abort(error);
      else if (!signal.aborted) this.log(`failed: ${error instanceof Error ? error.message : String(error)}`);
      result = this.failure("encoding_failed", MESSAGES.encodingFailed);
    } finally {
      clearInterval(heartbeat);
      if (dir) await rm(dir, { recursive: true, force: true });
    }
    // The result is the last message: no heartbeat still on its way behind it.
    await lastBeat;
    const silenced = this.silence.signal;
    if (silenced.aborted) {
      this.log(`cancelled: ${/** @type {Error | undefined} */ (silenced.reason)?.message ?? "no reason given"}`);
      return "cancelled";
    }
    if (signal.aborted) {
      this.log(`interrupted: ${/** @type {Error | undefined} */ (signal.reason)?.message}`);
      result = this.failure("encoding_failed", MESSAGES.encodingFailed);
    }
    try {
      await reporter.result(result);
    } catch (error) {
      if (silenced.aborted) return "cancelled";
      this.log(`could not report the result: ${/** @type {Error} */ (error).message}`);
    }
    this.log(`${result.status} after ${Date.now() - this.startedAt} ms`);
    return result.status;
  }

  identity() {
    return { version: PROTOCOL_VERSION, jobId: this.job.jobId, attempt: this.job.attempt };
  }

  /**
   * @param {import("./protocol.mjs").FailureCode} code
   * @param {string} message
   * @returns {Result}
   */
  failure(code, message) {
    return { ...this.identity(), status: "failed", code, message };
  }

  /**
   * Everything up to the result, which it returns; throws on a transient failure.
   * @param {import("./callback.mjs").CallbackClient} client
   * @param {string} dir the job's temporary folder
   * @returns {Promise<Result>}
   */
  async work(client, dir) {
    const { job, deps } = this;
    const signal = this.controller.signal;
    const source = join(dir, "source");
    await client.download("source", source);
    const watermarkFile = join(dir, "watermark");
    if (job.settings.watermark) await client.download("watermark", watermarkFile);

    this.advance("probing", STAGE_START.probing);
    const probed = await probe(deps.binaries.ffprobe, source, { signal });
    if (!probed.valid) {
      this.log(`invalid source: ${probed.reason}`);
      return this.failure("invalid_source", MESSAGES.invalidSource(probed.reason));
    }

    this.advance("encoding", STAGE_START.encoding);
    const renditions = ladder(probed, job.settings.enabledResolutions);
    const outDir = join(dir, "out");
    await mkdir(outDir);
    const watermark = job.settings.watermark;
    const duration = probed.duration;
    const args = ffmpegArgs({
      source,
      videoStream: probed.videoStream,
      audioStream: probed.audioStream,
      frameRate: probed.frameRate,
      interlaced: probed.interlaced,
      renditions,
      watermark: watermark && { path: watermarkFile, ...watermark },
      mp4: job.settings.mp4,
      posterTime: posterTime(duration ?? 0),
      outDir,
      threads: deps.threads,
    });
    const encoded = await runFfmpeg(deps.binaries.ffmpeg, args, {
      signal,
      onProgress: (seconds) => {
        if (duration) this.advance("encoding", STAGE_START.encoding + ENCODING_SHARE * Math.min(1, seconds / duration));
      },
    });
    if (!encoded.ok) {
      const tail = encoded.stderr.trim().split("\n").slice(-5).join(" | ");
      throw new Error(`${encoded.failure}: ${tail}`);
    }
    this.log(
      `encoded ${renditions.map((r) => r.resolution).join(" ")} in ${encoded.elapsedMs} ms, ffmpeg peak memory ${encoded.peakMemoryBytes ?? "unknown"} bytes`,
    );

    const hasAudio = probed.audioStream !== null;
    const { ffprobe } = deps.binaries;
    const files = await finishOutputs({ outDir, renditions, hasAudio, mp4: job.settings.mp4, ffprobe, signal });
    this.advance("uploading", STAGE_START.uploading);
    let uploaded = 0;
    await eachLimited(files, deps.uploadConcurrency, async (file) => {
      await client.upload(file, join(outDir, file));
      uploaded += 1;
      this.advance("uploading", STAGE_START.uploading + (UPLOAD_SHARE * uploaded) / files.length);
    });
    return {
      ...this.identity(),
      status: "ready",
      duration: Number((duration ?? encoded.outputSeconds).toFixed(3)),
      width: probed.width,
      height: probed.height,
      hasAudio,
      renditions,
      files,
      mp4: job.settings.mp4,
      poster: POSTER,
      peakMemoryBytes: encoded.peakMemoryBytes,
    };
  }
}

/**
 * Runs `work` on every item, at most `limit` at a time. After a failure no new item starts, and it
 * rejects once those already started have ended, so nothing is still being sent after it.
 * @template T
 * @param {T[]} items
 * @param {number} limit
 * @param {(item: T) => Promise<void>} work
 */
export async function eachLimited(items, limit, work) {
  let next = 0;
  let failed = false;
  const worker = async () => {
    while (next < items.length && !failed) {
      const item = /** @type {T} */ (items[next++]);
      try {
        await work(item);
      } catch (error) {
        failed = true;
        throw error;
      }
    }
  };
  const settled = await Promise.allSettled(Array.from({ length: Math.min(limit, items.length) }, worker));
  const rejection = settled.find((s) => s.status === "rejected");
  if (rejection) throw /** @type {PromiseRejectedResult} */ (rejection).reason;
}
