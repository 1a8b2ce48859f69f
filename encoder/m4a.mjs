// @ts-check
// An M4A job (contract section 19, "Audio only"): the AAC of the lowest rendition's segments (every
// rendition carries the same audio, and the lowest is the fewest bytes to read), read back from
// the Worker one after the other and copied into one audio-only MP4 (`audio/mp4`) without
// encoding anything again. Unlike the MP4 it is written to the job's folder first, so that ffmpeg
// can put its `moov` (with the duration and every sample's place) before the audio: AAC at
// 128 kbit/s is about 1 MB a minute (691 MiB for the longest video, 12 hours), then sent in parts
// of `partSize` bytes that the Worker adds to an R2 multipart upload.

import { spawn } from "node:child_process";
import { once } from "node:events";
import { createReadStream } from "node:fs";
import { stat } from "node:fs/promises";
import { join } from "node:path";
import { segmentCount } from "../media-plan/plan.mjs";
import { continuityFixer } from "./mp4.mjs";

/** @typedef {import("../media-plan/protocol.mjs").M4aJob} M4aJob */
/** @typedef {import("../media-plan/protocol.mjs").Part} Part */
/** @typedef {import("./callback.mjs").CallbackClient} CallbackClient */
/** @typedef {import("./binaries.mjs").Binaries} Binaries */

/** How long the remux may neither take a segment in nor write a byte before it is taken for stuck. */
const STALL_MS = 60_000;

/**
 * The ffmpeg arguments that copy the audio of MPEG-TS segments fed on standard input (one after the
 * other) into an M4A file: no video, no re-encoding (ADTS to MP4's AAC configuration), no
 * metadata, its `moov` moved to the front once written (`faststart`).
 * @param {string} file
 * @returns {string[]}
 */
export function m4aArgs(file) {
  return [
    "-hide_banner",
    "-nostdin",
    "-v",
    "error",
    "-protocol_whitelist",
    "pipe,file",
    "-f",
    "mpegts",
    "-i",
    "pipe:0",
    "-map",
    "0:a:0",
    "-vn",
    "-c:a",
    "copy",
    "-bsf:a",
    "aac_adtstoasc",
    "-map_metadata",
    "-1",
    "-movflags",
    "+faststart",
    "-f",
    "ipod",
    "-y",
    file,
  ];
}

/**
 * Remuxes the lowest rendition's audio into `file`.
 * @param {{ job: M4aJob, client: CallbackClient, binaries: Binaries, signal: AbortSignal }} run
 * @param {string} file
 * @param {(fraction: number) => void} onProgress
 */
async function remux(run, file, onProgress) {
  const { job, client, binaries, signal } = run;
  const lowest = /** @type {{ resolution: string }} */ (job.plan.renditions[0]);
  const count = segmentCount(job.plan);
  const child = spawn(binaries.ffmpeg.path, m4aArgs(file), {
    env: { ...process.env, ...binaries.ffmpeg.env },
    stdio: ["pipe", "ignore", "pipe"],
  });
  const kill = () => child.kill("SIGKILL");
  signal.addEventListener("abort", kill, { once: true });
  let lastActivity = Date.now();
  let stalled = false;
  const watchdog = setInterval(() => {
    if (Date.now() - lastActivity > STALL_MS) {
      stalled = true;
      kill();
    }
  }, 1000);
  let stderr = "";
  child.stderr.setEncoding("utf8");
  child.stderr.on("data", (chunk) => {
    stderr = (stderr + chunk).slice(-4000);
  });
  const exited = /** @type {Promise<[number | null, NodeJS.Signals | null]>} */ (once(child, "close"));
  child.stdin.on("error", () => {});
  const feed = async () => {
    const fix = continuityFixer();
    for (let index = 0; index < count; index++) {
      const segment = await client.getSegment(lowest.resolution, index);
      for await (const chunk of segment) {
        if (!child.stdin.write(fix(/** @type {Buffer} */ (chunk)))) await once(child.stdin, "drain");
        lastActivity = Date.now();
      }
      onProgress((index + 1) / count);
    }
    child.stdin.end();
  };
  try {
    const [, [code, killed]] = await Promise.all([
      feed().catch((error) => {
        kill();
        throw error;
      }),
      exited,
    ]);
    if (code !== 0)
      throw new Error(`ffmpeg ${killed ? `killed by ${killed}` : `exit code ${code}`}: ${stderr.trim().slice(-500)}`);
  } catch (error) {
    if (stalled) throw new Error(`the M4A's ffmpeg made no progress for ${STALL_MS / 1000} s`);
    throw error;
  } finally {
    clearInterval(watchdog);
    signal.removeEventListener("abort", kill);
  }
}

/**
 * The M4A job: the audio remuxed into the job's folder (`dir`), then sent in parts of
 * `job.partSize` bytes (the last may be shorter; at least one).
 * @param {{
 *   job: M4aJob,
 *   client: CallbackClient,
 *   binaries: Binaries,
 *   signal: AbortSignal,
 *   dir: string,
 *   onProgress: (fraction: number) => void,
 * }} run
 * @returns {Promise<{ parts: Part[], bytes: number }>}
 */
export async function runM4a(run) {
  const { job, client, dir } = run;
  const file = join(dir, "audio.m4a");
  await remux(run, file, (fraction) => run.onProgress(fraction * 0.8));
  const { size } = await stat(file);
  if (size === 0) throw new Error("the M4A's ffmpeg wrote nothing");
  /** @type {Part[]} */
  const parts = [];
  for (let start = 0; start < size; start += job.partSize) {
    const end = Math.min(size, start + job.partSize);
    const chunks = [];
    for await (const chunk of createReadStream(file, { start, end: end - 1, signal: run.signal })) chunks.push(chunk);
    const partNumber = parts.length + 1;
    const etag = await client.putPart(partNumber, Buffer.concat(chunks), "m4a");
    parts.push({ partNumber, etag });
    run.onProgress(0.8 + (0.2 * end) / size);
  }
  return { parts, bytes: size };
}
