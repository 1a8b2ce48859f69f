// @ts-check
// What the encoder's suites share: the binaries they need (never a skip when there are none), and
// one encoder process (node encoder/server.mjs) beside a fake Worker, with the tiny sources it is
// given and the helpers that post jobs to it.

import { mkdir, mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect } from "vitest";
import { storyboard } from "../../media-plan/pictures.mjs";
import { planEncoding, segmentCount } from "../../media-plan/plan.mjs";
import { resolveBinaries } from "../binaries.mjs";
import { startEncoder } from "./encoder-process.mjs";
import { startFakeWorker } from "./fake-worker.mjs";
import { makeFileParts } from "./file-parts.mjs";
import { makeSources } from "./media.mjs";

/** @typedef {import("./fake-worker.mjs").FakeWorker} FakeWorker */
/** @typedef {import("./fake-worker.mjs").FakeJob} FakeJob */
/** @typedef {import("./encoder-process.mjs").EncoderProcess} EncoderProcess */
/** @typedef {import("../../media-plan/plan.mjs").Plan} Plan */
/** @typedef {import("../../media-plan/plan.mjs").PlanSettings} PlanSettings */
/** @typedef {Awaited<ReturnType<typeof makeSources>>} Sources */

export const ENCODER_TOKEN = "encoder-test-token-0123456789abcdef";

// No ffmpeg is a failure, never a skip: these tests are what says the encoder works. CI runs them
// twice, with the system's ffmpeg and with the npm-packaged pair a fresh machine gets (.ci/run).
export const binaries = await resolveBinaries().catch((error) => {
  throw new Error(`the encoder's tests need ffmpeg and ffprobe, and none could be found: ${error.message}`);
});

/**
 * Starts, for the suite it is called in, a fake Worker and an encoder (2 interactive slots, 1
 * background) with the test sources made; stops them after. Its fields are set once the suite's
 * `beforeAll` has run.
 */
export function encoderHarness() {
  const harness = {
    /** The suite's folder: `tmp` is the encoder's, `scratch` holds the sources and what tests make. */
    dir: "",
    scratch: "",
    /** @type {FakeWorker} */ fake: /** @type {any} */ (undefined),
    /** @type {EncoderProcess} */ encoder: /** @type {any} */ (undefined),
    /** @type {Sources} */ sources: /** @type {any} */ (undefined),
    post,
    run,
    waitUntilIdle,
    planOf,
    segments,
    storyboardOf,
    fileOf,
  };
  let jobCount = 0;

  beforeAll(async () => {
    harness.dir = await mkdtemp(join(tmpdir(), "encoder-test-"));
    harness.scratch = join(harness.dir, "scratch");
    await mkdir(join(harness.dir, "tmp"));
    await mkdir(harness.scratch);
    harness.sources = await makeSources(binaries, harness.scratch);
    harness.fake = await startFakeWorker(join(harness.dir, "received"));
    harness.encoder = await startEncoder({
      ENCODER_TMPDIR: join(harness.dir, "tmp"),
      ENCODER_TOKEN,
      ENCODER_INTERACTIVE_JOBS: "2",
      ENCODER_BACKGROUND_JOBS: "1",
    });
  });

  afterAll(async () => {
    await harness.encoder?.stop();
    await harness.fake?.close();
    if (harness.dir) await rm(harness.dir, { recursive: true, force: true });
  });

  /**
   * Registers a job with the fake Worker and posts it to the encoder.
   * @param {Buffer} source
   * @param {Record<string, unknown>} job the job's kind and its fields
   * @param {Partial<FakeJob>} [init]
   * @param {EncoderProcess} [to]
   */
  async function post(source, job, init = {}, to = harness.encoder) {
    const jobId = `job-${++jobCount}`;
    const { job: fakeJob, callback } = harness.fake.addJob(jobId, {
      source,
      watermark: harness.sources.watermark,
      ...init,
    });
    const response = await fetch(`${to.origin}/v2/jobs`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${ENCODER_TOKEN}` },
      body: JSON.stringify({ version: 2, jobId, priority: "interactive", callback, ...job }),
    });
    return { jobId, job: fakeJob, response };
  }

  /**
   * Posts a job and waits for its result and for the encoder to be idle again.
   * @param {Buffer} source @param {Record<string, unknown>} job @param {Partial<FakeJob>} [init]
   */
  async function run(source, job, init) {
    const posted = await post(source, job, init);
    expect(posted.response.status).toBe(202);
    const result = await posted.job.resultReceived;
    await waitUntilIdle();
    return { ...posted, result };
  }

  /** The encoder runs no job and has left nothing in its temporary folder. */
  async function waitUntilIdle() {
    for (let i = 0; i < 100; i++) {
      const health = /** @type {{ running: Record<string, number> }} */ (
        await (await fetch(`${harness.encoder.origin}/healthz`)).json()
      );
      const busy = Object.values(health.running).some((n) => n > 0);
      if (!busy && (await readdir(join(harness.dir, "tmp"))).length === 0) return;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    throw new Error("the encoder stayed busy");
  }

  /** The plan of `source` under `settings`, from the encoder's own probe. @param {Buffer} source @param {PlanSettings} settings */
  async function planOf(source, settings) {
    const { result } = await run(source, { kind: "probe" });
    if (result.status !== "done" || !result.probe) throw new Error(`probe: ${JSON.stringify(result)}`);
    return planEncoding(result.probe, settings);
  }

  /**
   * Runs segments `from`..`to` of `plan` into `video`'s folder of the fake Worker.
   * @param {Buffer} source @param {Plan} plan @param {number} from @param {number} to @param {string} video @param {Partial<FakeJob>} [init]
   */
  async function segments(source, plan, from, to, video, init = {}) {
    const renditions = plan.renditions.map((r) => r.resolution);
    return run(source, { kind: "segments", priority: "background", plan, from, to, renditions }, { video, ...init });
  }

  /**
   * Makes `video`'s storyboard: its tiles in one job, then its sprite; returns the sprite's job.
   * @param {Buffer} source @param {Plan} plan @param {string} video
   */
  async function storyboardOf(source, plan, video) {
    const tiles = await run(source, { kind: "tiles", plan, from: 0, to: storyboard(plan).cues.length }, { video });
    expect(tiles.result).toMatchObject({ status: "done" });
    return run(source, { kind: "storyboard", plan }, { video });
  }

  /**
   * Makes `video`'s MP4 (or M4A) as the Worker would, a part per job (`makeFileParts`). Returns
   * every job's result and id, and the file's bytes, its parts in order.
   * @param {Buffer} source @param {Plan} plan @param {"mp4" | "m4a"} kind @param {string} video
   * @param {number} partSize
   */
  async function fileOf(source, plan, kind, video, partSize) {
    /** @type {string[]} */
    const jobIds = [];
    const { made, parts } = await makeFileParts(segmentCount(plan), async (step, index) => {
      const job = { kind, priority: "background", plan, partSize, ...step };
      const { result, jobId } = await run(source, job, { video, index });
      const part = result.status === "done" ? result[kind] : undefined;
      if (!part) throw new Error(`${kind} part: ${JSON.stringify(result)}`);
      jobIds.push(jobId);
      return part;
    });
    const bytes = [];
    for (const { part } of parts) bytes.push(await readFile(harness.fake.file(video, `${kind}/parts/${part}`)));
    return { made, jobIds, parts: bytes, bytes: Buffer.concat(bytes) };
  }

  return harness;
}
