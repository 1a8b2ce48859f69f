// @ts-check
// One job (media-plan/PROTOCOL.md): probe the source, encode a run of segments, make a still, some
// storyboard tiles or the storyboard's sprite, make one part of the MP4 or the M4A, hear the words
// of a chunk of speech, or cut a run of an added audio track's segments; heartbeats go out every few
// seconds meanwhile, and the result is the last message. A cancel (DELETE /v2/jobs/<id>, or a callback answered 410) kills ffmpeg, aborts the requests in
// flight and reports nothing; every other failure is reported. The job's temporary folder is
// always removed.

import { mkdtemp, open, rm } from "node:fs/promises";
import { join } from "node:path";
import { PROTOCOL_VERSION } from "../media-plan/protocol.mjs";
import { runAudio, TrackInvalid } from "./audio.mjs";
import { callbackClient, JobGone } from "./callback.mjs";
import { runFfmpeg } from "./encode.mjs";
import { stillArgs } from "./ffmpeg-args.mjs";
import { runFilePart } from "./files.mjs";
import { probe } from "./probe.mjs";
import { OutputInvalid, runSegments } from "./segments.mjs";
import { runSpeech } from "./speech.mjs";
import { storyboardSprite, tileArgs } from "./storyboard-args.mjs";

/** @typedef {import("../media-plan/protocol.mjs").Job} Job */
/** @typedef {import("../media-plan/protocol.mjs").Result} Result */
/** @typedef {import("./binaries.mjs").Binaries} Binaries */
/** @typedef {import("./callback.mjs").CallbackClient} CallbackClient */
/**
 * @typedef {{
 *   binaries: Binaries,
 *   speech: import("./speech.mjs").SpeechEngine | null,
 *   tempRoot: string,
 *   threads: number,
 *   heartbeatMs: number,
 *   retryDelaysMs?: number[],
 *   log: (line: string) => void,
 * }} JobDeps
 */
/** @typedef {"done" | "failed" | "cancelled"} Outcome */

/** Messages the video's owner may see (the video's `error.message`); details go to the log. */
const MESSAGES = {
  encodingFailed: "The video could not be encoded.",
  /** @param {string} reason */
  invalidSource: (reason) => `The source is not a decodable video: ${reason}.`,
  /** @param {string} reason */
  invalidTrack: (reason) => `The file is not a decodable audio track: ${reason}.`,
  interrupted: "The encoder stopped before the job was done.",
};

export class RunningJob {
  /**
   * @param {Job} job
   * @param {JobDeps} deps
   * @param {() => void} [onFinished] called once the work is over, before the result is sent
   */
  constructor(job, deps, onFinished) {
    this.job = job;
    this.deps = deps;
    this.onFinished = onFinished;
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
   * Stops the job's work and reports it failed (`encoding_failed`, so the Worker runs it again
   * elsewhere at once): for an encoder that is shutting down. Resolves once it has stopped.
   * @param {string} reason
   */
  async interrupt(reason) {
    this.controller.abort(new Error(reason));
    await this.done;
  }

  /** @param {string} line */
  log(line) {
    this.deps.log(`job ${this.job.jobId} (${this.job.kind}) ${line}`);
  }

  /** @param {number} fraction */
  advance(fraction) {
    this.progress = Math.max(this.progress, Math.min(1, fraction));
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
      const message = { version: PROTOCOL_VERSION, jobId: job.jobId, progress: Number(this.progress.toFixed(4)) };
      lastBeat = client.heartbeat(message).catch((error) => {
        if (error instanceof JobGone) {
          this.log("heartbeat answered 410: stopping");
          this.silence.abort(error);
          this.controller.abort(error);
        } else if (!signal.aborted) this.log(`heartbeat failed: ${error.message}`);
      });
    };
    const heartbeat = setInterval(beat, deps.heartbeatMs);
    beat();
    /** @type {Result} */
    let result;
    /** @type {string | null} */
    let dir = null;
    try {
      dir = await mkdtemp(join(deps.tempRoot, `encoder-${job.jobId}-`));
      result = await this.work(client, dir);
    } catch (error) {
      // A callback answered 410: the Worker has given this job up, so it hears nothing more.
      if (error instanceof JobGone) this.silence.abort(error);
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
      result = this.failure("interrupted", MESSAGES.interrupted);
    }
    // The work is over: its place is free for the next job while the result is on its way (the
    // Worker hands the place on as soon as it has the result).
    this.onFinished?.();
    try {
      await reporter.result(result);
    } catch (error) {
      if (silenced.aborted) return "cancelled";
      this.log(`could not report the result: ${/** @type {Error} */ (error).message}`);
    }
    this.log(`${result.status} after ${Date.now() - this.startedAt} ms`);
    return result.status;
  }

  /**
   * @param {import("../media-plan/protocol.mjs").FailureCode} code
   * @param {string} message
   * @returns {Result}
   */
  failure(code, message) {
    return { version: PROTOCOL_VERSION, jobId: this.job.jobId, status: "failed", code, message };
  }

  /**
   * The job's work, up to its result; throws on a failure worth running the job again for.
   * @param {CallbackClient} client
   * @param {string} dir the job's temporary folder
   * @returns {Promise<Result>}
   */
  async work(client, dir) {
    const { job, deps } = this;
    const signal = this.controller.signal;
    const done = /** @type {const} */ ({ version: PROTOCOL_VERSION, jobId: job.jobId, status: "done" });
    switch (job.kind) {
      case "probe": {
        const probed = await probe(deps.binaries.ffprobe, client.source, { signal });
        if (!probed.valid) {
          this.log(`invalid source: ${probed.reason}${probed.detail ? ` (${probed.detail})` : ""}`);
          return this.failure("invalid_source", MESSAGES.invalidSource(probed.reason));
        }
        const { valid: _valid, rotation: _rotation, ...facts } = probed;
        return { ...done, probe: { ...facts, duration: Number(facts.duration.toFixed(6)) } };
      }
      case "segments": {
        const watermark = await this.watermark(client, dir);
        await runSegments({
          job,
          client,
          binaries: deps.binaries,
          threads: deps.threads,
          dir,
          watermark,
          signal,
          onProgress: (fraction) => this.advance(fraction),
        });
        return done;
      }
      case "still": {
        const watermark = await this.watermark(client, dir);
        const file = join(dir, "still.jpg");
        const common = this.common(job.plan, client, watermark);
        await this.ffmpeg(stillArgs({ ...common, time: job.time, width: job.width ?? undefined, file }));
        await client.putStill(file);
        return done;
      }
      case "tiles": {
        // A still per cue at the tile size, each stored as it is made.
        const watermark = await this.watermark(client, dir);
        const common = this.common(job.plan, client, watermark);
        for (let cue = job.from; cue < job.to; cue++) {
          const file = join(dir, `tile_${cue}.jpg`);
          await this.ffmpeg(tileArgs(common, cue, file));
          await client.putTile(cue, file);
          this.advance((cue + 1 - job.from) / (job.to - job.from));
        }
        return done;
      }
      case "storyboard": {
        // The stored tiles, tiled into one sprite.
        const sprite = storyboardSprite(job.plan, dir);
        for (let cue = 0; cue < sprite.tiles; cue++) {
          await client.downloadTile(cue, sprite.tile(cue));
          this.advance((cue + 1) / (sprite.tiles + 1));
        }
        await this.ffmpeg(sprite.args);
        await client.putStill(sprite.file);
        return done;
      }
      case "mp4":
      case "m4a": {
        const part = await runFilePart({
          job,
          client,
          binaries: deps.binaries,
          signal,
          onProgress: (fraction) => this.advance(fraction),
        });
        return job.kind === "mp4" ? { ...done, mp4: part } : { ...done, m4a: part };
      }
      case "speech": {
        const words = await runSpeech({
          job,
          client,
          binaries: deps.binaries,
          engine: deps.speech,
          dir,
          signal,
          nice: job.priority === "background",
        });
        return { ...done, speech: { words } };
      }
      case "audio": {
        try {
          await runAudio({ job, client, binaries: deps.binaries, dir, signal, onProgress: (f) => this.advance(f) });
        } catch (error) {
          if (!(error instanceof TrackInvalid)) throw error;
          this.log(`invalid track: ${error.message}`);
          return this.failure("invalid_source", MESSAGES.invalidTrack(error.message));
        }
        return done;
      }
    }
  }

  /**
   * What every picture's ffmpeg run of this job shares: the plan, the source through the Worker,
   * the watermark, the threads and what this ffmpeg can do.
   * @param {import("../media-plan/plan.mjs").Plan} plan @param {CallbackClient} client
   * @param {Awaited<ReturnType<RunningJob["watermark"]>>} watermark
   */
  common(plan, client, watermark) {
    const { deps } = this;
    return { plan, source: client.source, watermark, threads: deps.threads, features: deps.binaries.features };
  }

  /** Runs ffmpeg with `args`; a failure throws OutputInvalid with its last lines. @param {string[]} args */
  async ffmpeg(args) {
    const made = await runFfmpeg(this.deps.binaries.ffmpeg, args, {
      signal: this.controller.signal,
      stallMs: 60_000,
      nice: this.job.priority === "background",
    });
    if (!made.ok) throw new OutputInvalid(`${made.failure}: ${made.stderr.trim().split("\n").slice(-3).join(" | ")}`);
  }

  /**
   * The watermark image on disk with its first bytes, when the plan draws one.
   * @param {CallbackClient} client @param {string} dir
   */
  async watermark(client, dir) {
    if (!("plan" in this.job) || !this.job.plan.watermark) return null;
    const file = join(dir, "watermark");
    await client.downloadWatermark(file);
    const handle = await open(file);
    try {
      const head = new Uint8Array(16);
      await handle.read(head, 0, 16, 0);
      return { file, head };
    } finally {
      await handle.close();
    }
  }
}
