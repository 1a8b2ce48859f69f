// @ts-check
// An audio job (media-plan/PROTOCOL.md, "Audio"): segments `from`..`to` of an added audio track
// (docs/audio-tracks.md), made from the track's own file, which the Worker serves as the job's
// source. The file is probed first (its first audio stream must decode: else the track is not one,
// `invalid_source`); then one ffmpeg run cuts that stream at the video's segments
// (ffmpeg-args.mjs `audioTrackArgs`), and each segment is checked (one AAC stream, no picture, as
// long as the video's segment at its index to within 0.1 s) and sent as ffmpeg closes it.

import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import { segmentSeconds } from "../media-plan/plan.mjs";
import { runBinary } from "./binaries.mjs";
import { audioTrackArgs } from "./ffmpeg-args.mjs";
import { probeAudio } from "./probe.mjs";
import { OutputInvalid, runSegmented } from "./segments.mjs";

/** @typedef {import("../media-plan/protocol.mjs").AudioJob} AudioJob */
/** @typedef {import("../media-plan/plan.mjs").Plan} Plan */
/** @typedef {import("./callback.mjs").CallbackClient} CallbackClient */
/** @typedef {import("./binaries.mjs").Binaries} Binaries */

/** How far a track's segment may last from the video's segment at its index. */
export const DURATION_TOLERANCE_SECONDS = 0.1;

/** The track's file is not an audio track: no audio stream, or audio that does not decode. */
export class TrackInvalid extends Error {
  /** @param {string} reason */
  constructor(reason) {
    super(reason);
    this.name = "TrackInvalid";
  }
}

/**
 * @param {{
 *   job: AudioJob,
 *   client: CallbackClient,
 *   binaries: Binaries,
 *   dir: string,
 *   signal: AbortSignal,
 *   onProgress: (fraction: number) => void,
 * }} run
 */
export async function runAudio(run) {
  const { job, client, binaries, signal } = run;
  const track = await probeAudio(binaries.ffprobe, client.source, { signal });
  if (!track.valid) throw new TrackInvalid(track.reason);
  const folder = join(run.dir, "audio");
  await mkdir(folder);
  const args = audioTrackArgs({
    plan: job.plan,
    source: client.source,
    track,
    features: binaries.features,
    from: job.from,
    to: job.to,
    outDir: run.dir,
  });
  const output = {
    name: "audio",
    list: join(run.dir, "audio.csv"),
    folder,
    check: (/** @type {string} */ file, /** @type {number} */ index) =>
      checkAudioSegment(binaries, file, job.plan, index, signal),
    put: (/** @type {number} */ index, /** @type {string} */ file) => client.putAudioSegment(index, file),
  };
  await runSegmented({ args, outputs: [output], job, binaries, signal, onProgress: run.onProgress });
}

/**
 * Checks that an audio segment is one AAC stream and nothing else, lasting segment `index`'s
 * duration (plan.mjs `segmentSeconds`) to within DURATION_TOLERANCE_SECONDS: from its first
 * packet's start to its last packet's end.
 * @param {Binaries} binaries @param {string} file @param {Plan} plan @param {number} index @param {AbortSignal} signal
 */
export async function checkAudioSegment(binaries, file, plan, index, signal) {
  const run = await runBinary(
    binaries.ffprobe,
    [
      ...["-v", "error", "-print_format", "json", "-show_entries", "stream=codec_type,codec_name"],
      ...["-show_entries", "packet=stream_index,pts_time,duration_time", file],
    ],
    { signal, timeoutMs: 30_000, keep: 4_000_000 },
  );
  if (run.code !== 0)
    throw new OutputInvalid(`ffprobe cannot read audio segment ${index}: ${run.stderr.slice(0, 200)}`);
  const probed = /** @type {{ streams?: Record<string, unknown>[], packets?: Record<string, unknown>[] }} */ (
    JSON.parse(run.stdout)
  );
  const streams = probed.streams ?? [];
  if (streams.length !== 1 || streams[0]?.codec_type !== "audio" || streams[0]?.codec_name !== "aac") {
    throw new OutputInvalid(`audio segment ${index}: expected one AAC stream, found ${JSON.stringify(streams)}`);
  }
  const seconds = packetsSpan(probed.packets ?? []);
  const expected = segmentSeconds(plan, index);
  if (!(Math.abs(seconds - expected) <= DURATION_TOLERANCE_SECONDS)) {
    throw new OutputInvalid(`audio segment ${index} lasts ${seconds.toFixed(3)} s, not ${expected.toFixed(3)} s`);
  }
}

/**
 * Seconds from the first packet's start to the last one's end (0 without packets).
 * @param {Record<string, unknown>[]} packets
 */
export function packetsSpan(packets) {
  let first = Number.POSITIVE_INFINITY;
  let last = Number.NEGATIVE_INFINITY;
  for (const packet of packets) {
    const pts = Number(packet.pts_time);
    if (!Number.isFinite(pts)) continue;
    first = Math.min(first, pts);
    last = Math.max(last, pts + (Number(packet.duration_time) || 0));
  }
  return last > first ? last - first : 0;
}
