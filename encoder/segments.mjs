// @ts-check
// A segments job: one ffmpeg run (ffmpeg-args.mjs `segmentArgs`) over segments `from`..`to` of
// some renditions. Each segment is sent to the Worker as soon as ffmpeg closes it (its line in the
// rendition's segment list), so a viewer waiting for the run's first segment gets it while the
// rest are still being made; a segment's file is deleted once stored, so the job's disk holds a
// few segments at most. The first segment of each rendition is checked (H.264 at the planned
// size, audio exactly when the plan has it) before anything of that rendition is sent. An audio
// job (audio.mjs) sends its segments the same way (`runSegmented`).

import { mkdir, readFile, rm } from "node:fs/promises";
import { join } from "node:path";
import { segmentIndex } from "../media-plan/protocol.mjs";
import { runBinary } from "./binaries.mjs";
import { runFfmpeg } from "./encode.mjs";
import { segmentArgs } from "./ffmpeg-args.mjs";

/** @typedef {import("../media-plan/protocol.mjs").SegmentsJob} SegmentsJob */
/** @typedef {import("./callback.mjs").CallbackClient} CallbackClient */
/** @typedef {import("./binaries.mjs").Binaries} Binaries */
/** @typedef {import("../media-plan/plan.mjs").PlannedRendition} PlannedRendition */
/** @typedef {import("./ffmpeg-args.mjs").WatermarkFile} WatermarkFile */

/** An output is missing or not what was asked for. */
export class OutputInvalid extends Error {
  /** @param {string} message */
  constructor(message) {
    super(message);
    this.name = "OutputInvalid";
  }
}

/** How often the segment lists are read while ffmpeg runs. */
const LIST_POLL_MS = 100;
/** Segments sent at once. */
const UPLOADS_AT_ONCE = 3;

/**
 * One output an ffmpeg run cuts into segments: the list ffmpeg writes its closed segments to (CSV)
 * and the folder they are in, the check a segment passes before it is sent (`check`, given its
 * index), and how it is sent (`put`).
 * @typedef {{
 *   name: string,
 *   list: string,
 *   folder: string,
 *   check: (file: string, index: number) => Promise<void>,
 *   put: (index: number, file: string) => Promise<void>,
 * }} SegmentOutput
 */

/**
 * @param {{
 *   job: SegmentsJob,
 *   client: CallbackClient,
 *   binaries: Binaries,
 *   threads: number,
 *   dir: string,
 *   watermark: WatermarkFile | null,
 *   signal: AbortSignal,
 *   onProgress: (fraction: number) => void,
 * }} run
 */
export async function runSegments(run) {
  const { job, client, binaries, signal } = run;
  const renditions = job.plan.renditions.filter((r) => job.renditions.includes(r.resolution));
  for (const r of renditions) await mkdir(join(run.dir, r.resolution));
  const args = segmentArgs({
    plan: job.plan,
    source: client.source,
    watermark: run.watermark,
    threads: run.threads,
    features: binaries.features,
    from: job.from,
    to: job.to,
    renditions,
    outDir: run.dir,
  });
  const outputs = renditions.map((r) => {
    let checked = false;
    return {
      name: r.resolution,
      list: join(run.dir, `${r.resolution}.csv`),
      folder: join(run.dir, r.resolution),
      // The first segment of each rendition is checked; the rest come from the same encoder.
      check: async (/** @type {string} */ file) => {
        if (checked) return;
        await checkSegment(binaries, file, r, job.plan.audio, signal);
        checked = true;
      },
      put: (/** @type {number} */ index, /** @type {string} */ file) => client.putSegment(r.resolution, index, file),
    };
  });
  await runSegmented({ args, outputs, job, binaries, signal, onProgress: run.onProgress });
}

/**
 * Runs ffmpeg with `args`, which cuts each of `outputs` into segments `job.from` to `job.to`, and
 * sends every segment as ffmpeg closes it, each once, checked first; throws OutputInvalid when a
 * segment is missing or fails its check, or ffmpeg fails.
 * @param {{
 *   args: string[],
 *   outputs: SegmentOutput[],
 *   job: { from: number, to: number, priority: string },
 *   binaries: Binaries,
 *   signal: AbortSignal,
 *   onProgress: (fraction: number) => void,
 * }} run
 */
export async function runSegmented(run) {
  const { job, outputs, binaries } = run;
  const expected = outputs.length * (job.to - job.from);
  const uploads = uploader({
    job,
    signal: run.signal,
    onStored: (count) => run.onProgress(count / expected),
  });
  const watching = setInterval(() => uploads.scan(outputs).catch(uploads.fail), LIST_POLL_MS);
  try {
    const encoded = await runFfmpeg(binaries.ffmpeg, run.args, {
      signal: uploads.signal,
      stallMs: 60_000,
      nice: job.priority === "background",
    });
    if (!encoded.ok) {
      uploads.fail(new Error(`${encoded.failure}: ${encoded.stderr.trim().split("\n").slice(-5).join(" | ")}`));
    }
  } finally {
    clearInterval(watching);
  }
  await uploads.scan(outputs).catch(uploads.fail);
  await uploads.finished();
  const missing = uploads.missing(outputs);
  if (missing.length > 0) throw new OutputInvalid(`ffmpeg made no ${missing.slice(0, 3).join(", ")}`);
}

/**
 * Sends the segments ffmpeg lists, each once, in order, a few at a time; the first failure aborts
 * the run (ffmpeg included, through `signal`).
 * @param {{
 *   job: { from: number, to: number },
 *   signal: AbortSignal,
 *   onStored: (count: number) => void,
 * }} options
 */
function uploader(options) {
  const { job } = options;
  const controller = new AbortController();
  options.signal.addEventListener("abort", () => controller.abort(options.signal.reason), { once: true });
  /** @type {unknown} */
  let failure = null;
  /** Segments listed by ffmpeg, by "output/index". */
  const listed = new Set();
  /** @type {{ output: SegmentOutput, index: number, file: string }[]} */
  const queue = [];
  let stored = 0;
  let active = 0;
  /** @type {(() => void)[]} */
  let idle = [];

  /** @param {unknown} error */
  const fail = (error) => {
    if (failure === null) failure = error;
    controller.abort(error);
  };

  const pump = () => {
    while (active < UPLOADS_AT_ONCE && queue.length > 0 && failure === null) {
      const next = /** @type {(typeof queue)[number]} */ (queue.shift());
      active += 1;
      send(next)
        .then(() => {
          stored += 1;
          options.onStored(stored);
        }, fail)
        .finally(() => {
          active -= 1;
          pump();
          if (settled()) {
            for (const resolve of idle) resolve();
            idle = [];
          }
        });
    }
  };

  /** Nothing is being sent, and nothing more will be until the next scan. */
  const settled = () => active === 0 && (queue.length === 0 || failure !== null);

  /** @param {(typeof queue)[number]} segment */
  const send = async (segment) => {
    await segment.output.check(segment.file, segment.index);
    await segment.output.put(segment.index, segment.file);
    await rm(segment.file, { force: true });
  };

  return {
    signal: controller.signal,
    fail,
    /**
     * Reads every output's segment list and queues what is new.
     * @param {SegmentOutput[]} outputs
     */
    async scan(outputs) {
      for (const output of outputs) {
        const list = await readFile(output.list, "utf8").catch(() => "");
        // Whole lines only: the last may still be being written.
        const lines = list.split("\n").slice(0, -1);
        for (const line of lines) {
          const name = line.split(",")[0] ?? "";
          const index = segmentIndex(name);
          const key = `${output.name}/${index}`;
          if (index === null || listed.has(key)) continue;
          if (index < job.from || index >= job.to) {
            fail(new OutputInvalid(`ffmpeg made ${output.name}/${name}, outside the run`));
            return;
          }
          listed.add(key);
          queue.push({ output, index, file: join(output.folder, name) });
        }
      }
      pump();
    },
    /** Resolves once nothing is being sent; rejects with the run's first failure. */
    async finished() {
      if (!settled()) await new Promise((resolve) => idle.push(() => resolve(undefined)));
      if (failure !== null) throw failure;
    },
    /** @param {SegmentOutput[]} outputs */
    missing(outputs) {
      const gaps = [];
      for (const output of outputs) {
        for (let index = job.from; index < job.to; index++) {
          if (!listed.has(`${output.name}/${index}`)) gaps.push(`${output.name}/${index}`);
        }
      }
      return gaps;
    },
  };
}

/**
 * Checks that a segment is H.264 at the rendition's size, with audio exactly when the plan has it.
 * The segment is read as the MPEG-TS it is (`-f mpegts`), not by ffprobe's guess: a segment of a
 * few tiny frames (two frames of one colour at 1 fps: nine 188-byte packets, from an ffmpeg that
 * repeats its PAT and PMT by packet count, as the npm-packaged 2018 build does) scores too low as
 * MPEG-TS, is taken for MPEG-PS, and reads as "End of file".
 * @param {Binaries} binaries @param {string} file @param {PlannedRendition} r @param {boolean} audio @param {AbortSignal} [signal]
 */
export async function checkSegment(binaries, file, r, audio, signal) {
  const run = await runBinary(
    binaries.ffprobe,
    [
      ...["-v", "error", "-print_format", "json", "-show_entries", "stream=codec_type,codec_name,width,height"],
      ...["-f", "mpegts", file],
    ],
    { signal, timeoutMs: 30_000 },
  );
  if (run.code !== 0)
    throw new OutputInvalid(`ffprobe cannot read ${r.resolution}'s segment: ${run.stderr.slice(0, 200)}`);
  const streams = /** @type {{ streams?: Record<string, unknown>[] }} */ (JSON.parse(run.stdout)).streams ?? [];
  const video = streams.find((s) => s.codec_type === "video");
  const audios = streams.filter((s) => s.codec_type === "audio");
  if (video?.codec_name !== "h264" || video.width !== r.width || video.height !== r.height) {
    throw new OutputInvalid(`${r.resolution}: expected H.264 ${r.width}x${r.height}`);
  }
  if (audios.length !== (audio ? 1 : 0)) throw new OutputInvalid(`${r.resolution}: ${audios.length} audio streams`);
}
