// @ts-check
// An M4A job (docs/audio-only.md): the AAC of the lowest rendition's segments (every
// rendition carries the same audio, and the lowest is the fewest bytes to read), read back from
// the Worker one after the other and copied into one audio-only MP4 (`audio/mp4`) without
// encoding anything again. Unlike the MP4 it is written to the job's folder first, so that ffmpeg
// can put its `moov` (with the duration and every sample's place) before the audio: AAC at
// 128 kbit/s is about 1 MB a minute (691 MiB for the longest video, 12 hours), then sent in parts
// of `partSize` bytes that the Worker adds to an R2 multipart upload.

import { createReadStream } from "node:fs";
import { stat } from "node:fs/promises";
import { join } from "node:path";
import { remuxSegments } from "./remux.mjs";
import { m4aArgs } from "./remux-args.mjs";

/** @typedef {import("../media-plan/protocol.mjs").M4aJob} M4aJob */
/** @typedef {import("../media-plan/protocol.mjs").Part} Part */
/** @typedef {import("./callback.mjs").CallbackClient} CallbackClient */
/** @typedef {import("./binaries.mjs").Binaries} Binaries */

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
  // The lowest rendition: every rendition carries the same audio, and it is the fewest bytes to read.
  const rendition = /** @type {{ resolution: string }} */ (job.plan.renditions[0]).resolution;
  const onProgress = (/** @type {number} */ fraction) => run.onProgress(fraction * 0.8);
  await remuxSegments(run, { rendition, args: m4aArgs(file), what: "the M4A", onProgress });
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
