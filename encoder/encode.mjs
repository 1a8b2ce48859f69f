// @ts-check
// One run of ffmpeg: its progress (from -progress), its peak memory (VmHWM, sampled from
// /proc/<pid>/status while it runs and once more when it says it is done), and a watchdog that
// kills it when its output clock stops moving.

import { readFileSync } from "node:fs";
import { anySignal } from "./abort.mjs";
import { describeExit, runBinary } from "./binaries.mjs";
import { background } from "./yielding.mjs";

/** @typedef {import("./binaries.mjs").Binary} Binary */
/**
 * @typedef {{
 *   ok: boolean,
 *   failure: string | null,
 *   stderr: string,
 *   peakMemoryBytes: number | null,
 *   outputSeconds: number,
 *   elapsedMs: number,
 * }} EncodeOutcome
 */

/**
 * The peak resident memory of process `pid` so far in bytes, or null where /proc cannot tell.
 * @param {number} pid
 */
export function peakMemory(pid) {
  try {
    const match = /^VmHWM:\s+(\d+)\s+kB$/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
    return match ? Number(match[1]) * 1024 : null;
  } catch {
    return null;
  }
}

/**
 * Reads ffmpeg's `-progress` output: key=value lines, a block ending with `progress=continue` or
 * `progress=end`. Calls `onTime` with the output clock in seconds, `onEnd` once at the end.
 * @param {{ onTime: (seconds: number) => void, onEnd: () => void }} handlers
 */
export function progressReader(handlers) {
  let pending = "";
  /** @param {string} chunk */
  return (chunk) => {
    pending += chunk;
    const lines = pending.split("\n");
    pending = lines.pop() ?? "";
    for (const line of lines) {
      const [key, value] = line.trim().split("=", 2);
      // ffmpeg 4 names the microseconds out_time_ms; later versions add out_time_us.
      if ((key === "out_time_us" || key === "out_time_ms") && value && /^\d+$/.test(value)) {
        handlers.onTime(Number(value) / 1e6);
      } else if (key === "progress" && value === "end") {
        handlers.onEnd();
      }
    }
  };
}

/**
 * @param {Binary} ffmpeg
 * @param {string[]} args
 * @param {{ signal?: AbortSignal, onProgress?: (seconds: number) => void, stallMs?: number, sampleMs?: number, nice?: boolean }} [options]
 * @returns {Promise<EncodeOutcome>}
 */
export async function runFfmpeg(ffmpeg, args, options = {}) {
  const stallMs = options.stallMs ?? 120_000;
  const started = Date.now();
  let peak = /** @type {number | null} */ (null);
  let pid = /** @type {number | null} */ (null);
  let outputSeconds = 0;
  let lastAdvance = Date.now();
  let stalled = false;
  const watchdog = new AbortController();
  const sample = () => {
    if (pid === null) return;
    const now = peakMemory(pid);
    if (now !== null) peak = Math.max(peak ?? 0, now);
  };
  const timer = setInterval(() => {
    sample();
    // A background run stopped while a viewer's work runs (yielding.mjs) is not stalled.
    if (options.nice && background.stopped) lastAdvance = Date.now();
    if (Date.now() - lastAdvance > stallMs) {
      stalled = true;
      watchdog.abort();
    }
  }, options.sampleMs ?? 200);
  const signal = options.signal ? anySignal([options.signal, watchdog.signal]) : watchdog.signal;
  try {
    const run = await runBinary(ffmpeg, args, {
      signal,
      keep: 8_000,
      nice: options.nice,
      onSpawn: (id) => {
        pid = id;
      },
      onStdout: progressReader({
        onTime: (seconds) => {
          if (seconds > outputSeconds) {
            outputSeconds = seconds;
            lastAdvance = Date.now();
            options.onProgress?.(seconds);
          }
        },
        // The last moment the process is sure to exist with its high-water mark final.
        onEnd: sample,
      }),
    });
    const ok = run.code === 0 && !run.signal;
    const failure = ok
      ? null
      : stalled
        ? `ffmpeg made no progress for ${Math.round(stallMs / 1000)} s`
        : `ffmpeg ${describeExit(run)}`;
    return {
      ok,
      failure,
      stderr: run.stderr,
      peakMemoryBytes: peak,
      outputSeconds,
      elapsedMs: Date.now() - started,
    };
  } finally {
    clearInterval(timer);
  }
}
