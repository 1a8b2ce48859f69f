// @ts-check
// The baseline of the encoding benchmarks (`npm run bench:encoder`, `npm run bench`): one ffmpeg
// run over the whole source, with the encoder's own plan and encoding settings (every segment of
// every rendition in one run), run as from a shell with nothing read from it. Built here once so
// both benchmarks compare against the same command.

import { spawn } from "node:child_process";
import { mkdir, rm } from "node:fs/promises";
import { availableParallelism } from "node:os";
import { join } from "node:path";
import { planEncoding, segmentCount } from "../../media-plan/plan.mjs";
import { segmentArgs } from "../ffmpeg-args.mjs";
import { probe } from "../probe.mjs";

/** @typedef {import("../binaries.mjs").Binaries} Binaries */
/** @typedef {import("../../media-plan/plan.mjs").PlanSettings} PlanSettings */
/** @typedef {import("../source.mjs").SourceInput} SourceInput */
/** @typedef {import("../ffmpeg-args.mjs").WatermarkFile} WatermarkFile */

/** The encoder's thread count as server.mjs picks it: ENCODER_THREADS, else the cores, at most 4. */
export const defaultThreads = (env = process.env) => Number(env.ENCODER_THREADS) || Math.min(availableParallelism(), 4);

/**
 * The plan of `source` under `settings` and one ffmpeg run's arguments that make all of it into
 * `out` (emptied first), as the encoder's jobs would make it piece by piece.
 * @param {Binaries} binaries
 * @param {{ source: SourceInput, settings: PlanSettings, watermark: WatermarkFile | null, out: string, threads?: number }} options
 */
export async function wholeRun(binaries, { source, settings, watermark, out, threads = defaultThreads() }) {
  const probed = await probe(binaries.ffprobe, source);
  if (!probed.valid) throw new Error(`bench source invalid: ${probed.reason}`);
  const plan = planEncoding(probed, settings);
  await rm(out, { recursive: true, force: true });
  for (const r of plan.renditions) await mkdir(join(out, r.resolution), { recursive: true });
  const args = segmentArgs({
    plan,
    source,
    watermark,
    threads,
    features: binaries.features,
    from: 0,
    to: segmentCount(plan),
    renditions: plan.renditions,
    outDir: out,
  });
  return { plan, args };
}

/**
 * ffmpeg run directly with `args`, as from a shell; resolves with its wall time in ms.
 * @param {Binaries} binaries
 * @param {string[]} args
 * @returns {Promise<number>}
 */
export function runDirect(binaries, args) {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const child = spawn(binaries.ffmpeg.path, args, {
      stdio: "ignore",
      env: { ...process.env, ...binaries.ffmpeg.env },
    });
    child.on("error", reject);
    child.on("close", (code) =>
      code === 0 ? resolve(performance.now() - started) : reject(new Error(`ffmpeg exit ${code}`)),
    );
  });
}
