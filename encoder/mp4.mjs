// @ts-check
// An MP4 job: the highest rendition's segments, read back from the Worker one after the other,
// put into one MP4 without encoding anything again (remux.mjs, ffmpeg-args.mjs `mp4Args`), streamed
// out in parts of `partSize` bytes that the Worker adds to an R2 multipart upload. Nothing is kept
// on disk, and no request carries more than one part, so an MP4 of any length is made the same way.
// Its index comes first (mp4-index.mjs): the segments are read twice, once to measure, once to send.

import { topRendition } from "../media-plan/plan.mjs";
import { FragmentScanner, indexedHeader } from "./mp4-index.mjs";
import { remuxSegments } from "./remux.mjs";
import { mp4Args } from "./remux-args.mjs";

/** @typedef {import("../media-plan/protocol.mjs").Mp4Job} Mp4Job */
/** @typedef {import("../media-plan/protocol.mjs").Part} Part */
/** @typedef {import("./callback.mjs").CallbackClient} CallbackClient */
/** @typedef {import("./binaries.mjs").Binaries} Binaries */

/**
 * Remuxes the highest rendition's segments into a fragmented MP4, giving each chunk of it to
 * `onChunk` (awaited: it may hold the remux back).
 * @param {{ job: Mp4Job, client: CallbackClient, binaries: Binaries, signal: AbortSignal }} run
 * @param {(fraction: number) => void} onProgress
 * @param {(chunk: Buffer) => Promise<void> | void} onChunk
 */
function remux(run, onProgress, onChunk) {
  const rendition = topRendition(run.job.plan).resolution;
  return remuxSegments(run, { rendition, args: mp4Args(), what: "the MP4", onProgress, onChunk });
}

/**
 * The MP4 job, in two passes over the segments (mp4-index.mjs): the first measures the fragments,
 * the second streams the MP4 out with its index first (the `moov` with the duration and a `sidx`
 * of every fragment), in parts of `partSize` bytes. The remux gives the same bytes both times
 * (stream copy, no metadata); the second pass checks that every fragment is where the index says.
 * @param {{
 *   job: Mp4Job,
 *   client: CallbackClient,
 *   binaries: Binaries,
 *   signal: AbortSignal,
 *   onProgress: (fraction: number) => void,
 * }} run
 * @returns {Promise<{ parts: Part[], bytes: number }>}
 */
export async function runMp4(run) {
  const { job, client } = run;
  const scanner = new FragmentScanner();
  await remux(
    run,
    (fraction) => run.onProgress(fraction / 2),
    (chunk) => scanner.push(chunk),
  );
  const scan = scanner.result();
  const header = indexedHeader(scan, job.plan.duration);
  const expected = header.length + scan.fragments.reduce((sum, fragment) => sum + fragment.size, 0);

  /** @type {Part[]} */
  const parts = [];
  let bytes = 0;
  /** @type {Buffer[]} */
  let buffered = [header];
  let size = header.length;
  /** Bytes of the second pass's own ftyp and moov still to drop (the header stands for them). */
  let drop = scan.headerBytes;
  /** @param {Buffer} part */
  const send = async (part) => {
    const partNumber = parts.length + 1;
    parts.push({ partNumber, etag: "" });
    const etag = await client.putPart(partNumber, part);
    /** @type {Part} */ (parts[partNumber - 1]).etag = etag;
  };
  await remux(
    run,
    (fraction) => run.onProgress(0.5 + fraction / 2),
    async (chunk) => {
      let data = chunk;
      if (drop > 0) {
        const dropped = Math.min(drop, data.length);
        drop -= dropped;
        data = data.subarray(dropped);
      }
      buffered.push(data);
      size += data.length;
      while (size >= job.partSize) {
        const all = Buffer.concat(buffered);
        await send(all.subarray(0, job.partSize));
        bytes += job.partSize;
        buffered = [all.subarray(job.partSize)];
        size = all.length - job.partSize;
      }
    },
  );
  bytes += size;
  if (bytes !== expected) {
    throw new Error(`the second remux gave ${bytes} bytes where its index says ${expected}: not the same MP4`);
  }
  if (size > 0 || parts.length === 0) await send(Buffer.concat(buffered));
  return { parts, bytes };
}
