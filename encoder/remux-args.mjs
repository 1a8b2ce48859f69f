// @ts-check
// The ffmpeg arguments of the files put together from a video's stored segments (the MP4 and the
// M4A): a remux, copying what the segments hold without encoding anything again. The encodes'
// arguments are in ffmpeg-args.mjs.

import { frameTime } from "../media-plan/plan.mjs";

/** @typedef {import("../media-plan/plan.mjs").Plan} Plan */

/**
 * The ffmpeg arguments of a remux of segments fed on standard input one after the other (MPEG-TS),
 * without encoding anything again (ADTS AAC to MP4's), without metadata: `protocols` ffmpeg may
 * open, the streams it keeps (`select`), then the container and where it goes (`output`).
 * @param {string} protocols @param {string[]} select @param {string[]} output
 */
function remuxArgs(protocols, select, output) {
  return [
    "-hide_banner",
    "-nostdin",
    "-v",
    "error",
    "-protocol_whitelist",
    protocols,
    "-f",
    "mpegts",
    "-i",
    "pipe:0",
    ...select,
    "-bsf:a",
    "aac_adtstoasc",
    "-map_metadata",
    "-1",
    ...output,
  ];
}

/**
 * The ffmpeg arguments that remux segments into a fragmented file on standard output
 * (`empty_moov`: the moov first, then fragments; nothing seeks back, nothing goes to disk, so a
 * part streams out at any size): the MP4, the segments' video and audio with a fragment per
 * keyframe, or the M4A, their audio alone with a fragment about every segment's length.
 * @param {"mp4" | "m4a"} kind @param {Plan} plan
 * @returns {string[]}
 */
export function fileArgs(kind, plan) {
  const fragments = "+empty_moov+default_base_moof";
  if (kind === "mp4") {
    return remuxArgs(
      "pipe",
      ["-map", "0:v", "-map", "0:a?", "-c", "copy"],
      ["-movflags", `+frag_keyframe${fragments}`, "-f", "mp4", "pipe:1"],
    );
  }
  const segmentMicroseconds = Math.round(frameTime(plan, plan.framesPerSegment) * 1e6);
  return remuxArgs(
    "pipe",
    ["-map", "0:a:0", "-vn", "-c:a", "copy"],
    ["-movflags", fragments, "-frag_duration", String(segmentMicroseconds), "-f", "ipod", "pipe:1"],
  );
}
