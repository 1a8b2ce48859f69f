// @ts-check
// The files put together from a video's stored segments (the MP4 and the M4A), in parts (pure,
// both sides): each part is one encoder job, so the part's size bounds the work a job holds an
// encoder for (a part's segments read back and remuxed), whatever the video's length. R2 wants
// every part but the last one size and at most 10,000 of them; no request carries more than
// MAX_REQUEST_BYTES. PROTOCOL.md, "Files in parts".

import { AUDIO_BITRATE, frameTime, segmentCount, topRendition } from "./plan.mjs";
import { MAX_PARTS, MAX_REQUEST_BYTES, MIN_PART_BYTES } from "./protocol.mjs";

/** @typedef {import("./plan.mjs").Plan} Plan */
/** @typedef {"mp4" | "m4a"} FileKind */
/**
 * A part made (its job's result, `FilePart`, with where it started): the first part's `etag` is
 * null while it has only measured its segments.
 * @typedef {import("./protocol.mjs").FilePart & { part: number, from: number }} MadePart
 */
/**
 * What a file's next job makes: part `part` from segment `from` (up to `to` when given), its
 * fragments numbered from `sequence`, on the time line from `origin` (null for the first part).
 * @typedef {{ part: number, from: number, to: number | null, sequence: number, origin: number | null }} PartStep
 */

/**
 * A part's bytes when nothing larger is needed: about a second's work to read back and remux
 * locally (the MP4's 16 MiB of video; the M4A's 5 MiB of audio, read out of about five times its
 * bytes of the lowest rendition). A part is padded to its size after its last whole segment, so a
 * larger part wastes less (at most a segment's bytes each).
 */
const PART_BYTES = { mp4: 16 * 1024 * 1024, m4a: MIN_PART_BYTES };

/**
 * The bytes the first part keeps for the file's index in front of its own fragments: the `ftyp`
 * and `moov` (a few hundred bytes, and room to spare) and a `sidx` per track with a reference of
 * 12 bytes per fragment; a segment has at most three fragments (the MP4 has a fragment per
 * keyframe, two a segment; the M4A one about a segment long).
 * @param {Plan} plan @param {FileKind} file
 */
export function indexBound(plan, file) {
  const tracks = file === "m4a" || !plan.audio ? 1 : 2;
  return 64 * 1024 + tracks * (32 + 12 * 3 * segmentCount(plan));
}

/**
 * The most bytes a segment of the file's streams can have: the MP4's, the highest rendition's
 * `bandwidth` (its peak rate, audio and the MPEG-TS packaging included) over a segment; the M4A's,
 * its audio with a tenth more.
 * @param {Plan} plan @param {FileKind} file
 */
function segmentPeak(plan, file) {
  const seconds = frameTime(plan, plan.framesPerSegment);
  const rate = file === "mp4" ? topRendition(plan).bandwidth : AUDIO_BITRATE * 1.1;
  return Math.ceil((rate * seconds) / 8);
}

/**
 * The part size of `file` for `plan`: PART_BYTES, or more where a segment at its peak and the
 * index must fit in the first part, or where the file at its peak would need more than 9,500 parts
 * (R2 allows 10,000); at most MAX_REQUEST_BYTES.
 * @param {Plan} plan @param {FileKind} file
 */
export function partSize(plan, file) {
  const peak = segmentPeak(plan, file);
  const needed = Math.max(
    PART_BYTES[file],
    peak + indexBound(plan, file) + 8,
    Math.ceil((peak * segmentCount(plan)) / (MAX_PARTS - 500)),
  );
  return Math.min(MAX_REQUEST_BYTES, needed);
}

/**
 * The next part of a file made from `count` segments, by the parts made (`made`, the first part's
 * last write replacing its measure): the first part measures where it ends; then every other part
 * in turn from where the one before ended; then the first part again, with the index of all.
 * `complete` once the first part is written.
 * @param {number} count @param {readonly MadePart[]} made
 * @returns {PartStep | "complete"}
 */
export function nextPart(count, made) {
  const head = made.find((part) => part.part === 1);
  if (!head) return { part: 1, from: 0, to: null, sequence: 1, origin: null };
  if (head.etag !== null) return "complete";
  const others = made.filter((part) => part.part > 1).sort((a, b) => a.part - b.part);
  const last = others.at(-1) ?? head;
  if (last.to < count) {
    const sequence = 1 + head.fragments.length + others.reduce((sum, part) => sum + part.fragments.length, 0);
    return { part: last.part + 1, from: last.to, to: null, sequence, origin: head.origin };
  }
  return { part: 1, from: 0, to: head.to, sequence: 1, origin: null };
}
