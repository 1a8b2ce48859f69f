// @ts-check
// The baseline of the encoding benchmarks (`npm run bench:encoder`, `npm run bench`): the encoder's
// own ffmpeg command line for a source and settings, run directly as from a shell, with nothing
// read from it. Built here once so both benchmarks compare against the same command.

import { spawn } from "node:child_process";
import { mkdir, rm } from "node:fs/promises";
import { availableParallelism } from "node:os";
import { ffmpegArgs, posterTime } from "./ffmpeg-args.mjs";
import { ladder } from "./ladder.mjs";
import { probe } from "./probe.mjs";

/** @typedef {import("./binaries.mjs").Binaries} Binaries */
/** @typedef {import("./protocol.mjs").Job["settings"]} Settings */

/** The encoder's thread count as server.mjs picks it: ENCODER_THREADS, else the cores, at most 4. */
export const defaultThreads = (env = process.env) => Number(env.ENCODER_THREADS) || Math.min(availableParallelism(), 4);

/**
 * The encoder's ffmpeg arguments for `source` under `settings`, writing to `out` (emptied first),
 * built as a job builds them (encoder/job.mjs): probe, ladder, ffmpegArgs.
 * @param {Binaries} binaries
 * @param {{ source: string, settings: Settings, watermark: string | null, out: string, threads?: number }} options
 */
export async function directArgs(binaries, { source, settings, watermark, out, threads = defaultThreads() }) {
  const probed = await probe(binaries.ffprobe, source);
  if (!probed.valid) throw new Error(`bench source invalid: ${probed.reason}`);
  if (settings.watermark && !watermark) throw new Error("settings with a watermark need its image");
  await rm(out, { recursive: true, force: true });
  await mkdir(out, { recursive: true });
  return ffmpegArgs({
    source,
    videoStream: probed.videoStream,
    audioStream: probed.audioStream,
    frameRate: probed.frameRate,
    interlaced: probed.interlaced,
    renditions: ladder(probed, settings.enabledResolutions),
    watermark: settings.watermark && watermark ? { path: watermark, ...settings.watermark } : null,
    mp4: settings.mp4,
    posterTime: posterTime(probed.duration ?? 0),
    outDir: out,
    threads,
  });
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
