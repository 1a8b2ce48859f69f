// @ts-check
// A part of a file put together from the stored segments (media-plan/PROTOCOL.md, "Files in
// parts"): the MP4 (the highest rendition's video and audio) or the M4A (the lowest rendition's
// audio alone: every rendition carries the same audio, and the lowest is the fewest bytes to read),
// copied without encoding anything again. A job makes one part, so no job holds its encoder for
// long whatever the video's length: it reads its segments back from the Worker into memory, remuxes
// them (remux.mjs, remux-args.mjs `fileArgs`) into fragments placed on the file's time line
// (mp4-index.mjs `placeFragments`), pads them to the part's size with a `free` box (all parts but
// the last are one size, as R2 wants), and sends the part. The first part begins with the file's
// index (the `moov` with the duration, a `sidx` per track), made last, from every other part's
// fragments (`GET …/<file>/index`); before the others, it only measures where it ends.

import { indexBound } from "../media-plan/files.mjs";
import { segmentCount, topRendition } from "../media-plan/plan.mjs";
import { fileTracks, freeBox, indexedHeader, placeFragments } from "./mp4-index.mjs";
import { continuityFixer, firstTimestamp, remux, streamBytes, tsStreams } from "./remux.mjs";
import { fileArgs } from "./remux-args.mjs";

/** @typedef {import("../media-plan/protocol.mjs").FileJob} FileJob */
/** @typedef {import("../media-plan/protocol.mjs").FilePart} FilePart */
/** @typedef {import("../media-plan/protocol.mjs").Fragment} Fragment */
/** @typedef {import("./callback.mjs").CallbackClient} CallbackClient */
/** @typedef {import("./binaries.mjs").Binaries} Binaries */

/** The smallest `free` box: what a part's padding needs room for. */
const FREE_BOX_BYTES = 8;
/**
 * A remux writes fewer bytes than the MPEG-TS of the streams it keeps (no 4-byte header per
 * 188-byte packet, no PES headers): segments are read until their kept bytes could fill a part at
 * this ratio, and the ones that fit are kept.
 */
const LEAST_RATIO = 0.85;
/** The MPEG-TS clock. */
const TS_HZ = 90_000;

/**
 * Makes part `job.part` of the file (PROTOCOL.md, "Files in parts").
 * @param {{
 *   job: FileJob,
 *   client: CallbackClient,
 *   binaries: Binaries,
 *   signal: AbortSignal,
 *   onProgress: (fraction: number) => void,
 * }} run
 * @returns {Promise<FilePart>}
 */
export async function runFilePart(run) {
  const { job, client } = run;
  const count = segmentCount(job.plan);
  const head = job.part === 1;
  const room = job.partSize - FREE_BOX_BYTES - (head ? indexBound(job.plan, job.kind) : 0);
  const read = await readSegments(run, room);
  const made = await fitted(run, read, room);
  run.onProgress(0.8);
  const origin = made.origin;
  const last = made.to === count;
  // Every part but the file's last is padded to the part's size with a `free` box, and the padding
  // belongs to the span of the part's last fragment: the first part's index counts it too, or a
  // player reads the index as ending short of the file and reads every fragment to find the rest.
  const padded = (/** @type {number} */ padding) =>
    padding === 0 ? made.fragments : [...made.fragments.slice(0, -1), grown(made.fragments.at(-1), padding)];
  /** @type {Buffer[]} */
  const bytes = [];
  let padding = last ? 0 : job.partSize - made.body.length;
  if (head) {
    // Before the other parts, the first only measures (it cannot write the index yet), unless
    // it holds the whole file.
    if (job.to === null && !last) return { to: made.to, fragments: made.fragments, origin, etag: null };
    const others = last ? [] : await client.getIndex(job.kind);
    const index = (/** @type {Fragment[]} */ own) =>
      indexedHeader(
        { ftyp: made.ftyp, moov: made.moov, tracks: made.tracks, fragments: [...own, ...others] },
        job.plan.duration,
      );
    // The index's length does not depend on the sizes it lists: measured once, then written with
    // the padding that follows from it.
    if (!last) padding -= index(made.fragments).length;
    bytes.push(index(padded(padding)));
  }
  bytes.push(made.body);
  if (padding > 0) bytes.push(freeBox(padding));
  const fragments = padded(padding);
  const etag = await client.putPart(job.part, Buffer.concat(bytes), job.kind);
  run.onProgress(1);
  return { to: made.to, fragments, origin, etag };
}

/**
 * `fragment` with `by` more bytes in its span.
 * @param {Fragment | undefined} fragment @param {number} by
 * @returns {Fragment}
 */
function grown(fragment, by) {
  if (fragment === undefined) throw new Error("a part without fragments");
  return { ...fragment, size: fragment.size + by };
}

/**
 * What the file keeps of a segment, and from which rendition: the MP4 the highest rendition's
 * video and audio, the M4A the lowest's audio.
 * @param {FileJob} job
 */
function fileOf(job) {
  if (job.kind === "mp4") return { rendition: topRendition(job.plan).resolution, streams: ["video", "audio"] };
  return { rendition: /** @type {{ resolution: string }} */ (job.plan.renditions[0]).resolution, streams: ["audio"] };
}

/**
 * The job's segments, from `from`: up to `to` when given, else until their kept streams' bytes
 * could fill `room` (or the last segment), each as whole MPEG-TS packets.
 * @param {{ job: FileJob, client: CallbackClient, signal: AbortSignal, onProgress: (fraction: number) => void }} run
 * @param {number} room
 */
async function readSegments(run, room) {
  const { job, client } = run;
  const { rendition, streams } = fileOf(job);
  const end = job.to ?? segmentCount(job.plan);
  /** @type {{ bytes: Buffer, kept: number }[]} */
  const segments = [];
  /** @type {number[] | null} */
  let pids = null;
  let kept = 0;
  for (let index = job.from; index < end; index++) {
    if (job.to === null && segments.length > 0 && kept * LEAST_RATIO > room) break;
    const chunks = [];
    for await (const chunk of await client.getSegment(rendition, index)) chunks.push(chunk);
    const bytes = Buffer.concat(chunks);
    if (pids === null) {
      const found = tsStreams(bytes);
      pids = streams.map((stream) => found[/** @type {"video" | "audio"} */ (stream)]).filter((pid) => pid !== null);
      if (pids.length === 0) throw new Error(`segment ${index} of ${rendition} has none of the file's streams`);
    }
    const bytesKept = streamBytes(bytes, pids);
    kept += bytesKept;
    segments.push({ bytes, kept: bytesKept });
    run.onProgress((0.6 * (index - job.from + 1)) / Math.max(1, end - job.from));
  }
  return segments;
}

/**
 * The remux of the longest run of `segments` from the first whose fragments fit in `room` (all of
 * them when the job names its `to`): its header boxes, fragments placed on the file's time line,
 * and the segment after them. A run that does not fit is cut by the bytes it wrote per byte read,
 * and remuxed again (from memory).
 * @param {{ job: FileJob, binaries: Binaries, signal: AbortSignal }} run
 * @param {{ bytes: Buffer, kept: number }[]} segments
 * @param {number} room
 */
async function fitted(run, segments, room) {
  const { job } = run;
  let count = segments.length;
  for (;;) {
    const made = await remuxed(run, segments.slice(0, count));
    if (made.body.length <= room || job.to !== null) {
      if (made.body.length > room)
        throw new Error(`part ${job.part}'s segments make ${made.body.length} bytes, over ${room}`);
      return { ...made, to: job.from + count };
    }
    if (count === 1)
      throw new Error(`segment ${job.from} alone makes ${made.body.length} bytes, over a part's ${room}`);
    // The bytes written per kept byte read, with a margin, say how many segments fit.
    const kept = segments.slice(0, count).reduce((sum, s) => sum + s.kept, 0);
    const ratio = made.body.length / kept;
    let fit = 0;
    for (let total = 0; fit < count - 1; fit++) {
      total += /** @type {{ kept: number }} */ (segments[fit]).kept;
      if (total * ratio * 1.01 > room) break;
    }
    count = Math.max(1, Math.min(count - 1, fit));
  }
}

/**
 * One remux of `segments` (joined as one continuous stream), its fragments placed on the file's
 * time line (`placeFragments`): measured from the file's `origin` (the earliest timestamp of its
 * first part's segments, 90 kHz: the job's, else these segments' own), and numbered from the job's
 * `sequence`. ffmpeg starts its output at the earliest timestamp of its input: a track starting
 * later starts that much after it.
 * @param {{ job: FileJob, binaries: Binaries, signal: AbortSignal }} run
 * @param {{ bytes: Buffer }[]} segments
 */
async function remuxed(run, segments) {
  const { job } = run;
  const fix = continuityFixer();
  const input = Buffer.concat(segments.map((segment) => fix(segment.bytes)));
  const inBackground = job.priority === "background";
  const output = await remux(run.binaries, fileArgs(job.kind, job.plan), input, run.signal, inBackground);
  const found = tsStreams(input);
  const tracks = fileTracks(output);
  const first = tracks.map((track) => {
    const pid = track.video ? found.video : found.audio;
    const time = pid === null ? null : firstTimestamp(input, pid);
    if (time === null)
      throw new Error(`no ${track.video ? "video" : "audio"} timestamp in part ${job.part}'s segments`);
    return time;
  });
  const start = Math.min(...first);
  const origin = job.origin ?? start;
  // In a track's time scale, as ffmpeg rescales (the nearest tick: an AAC packet lasts 1,920 ticks
  // of 90 kHz and 1,024 of 48 kHz, but a source's audio may start between them).
  const ticks = (/** @type {number} */ ts, /** @type {number} */ timescale) => {
    if (ts < 0) throw new Error(`part ${job.part} starts before the file's origin`);
    return Math.round((ts * timescale) / TS_HZ);
  };
  const placed = placeFragments(output, {
    sequence: job.sequence,
    shift: tracks.map((track) => ticks(start - origin, track.timescale)),
    firsts: tracks.map((track, i) => ticks(/** @type {number} */ (first[i]) - start, track.timescale)),
  });
  return { ...placed, origin };
}
