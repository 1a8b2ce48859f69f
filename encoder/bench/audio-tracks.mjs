// @ts-check
// What making an added audio track costs (docs/audio-tracks.md): a track of `--seconds` (default
// 600: a 10-minute video) made by the encoder through a local fake Worker, one audio job after the
// other (one background slot), in runs of each length of `--runs` segments (default 5, 15 and 30).
// For each length it prints the jobs' wall time (median and longest: how long one holds its slot)
// and the whole track's, against the video's duration. The track is an AAC file (`--format m4a`)
// or WAV (`--format wav`); the video's plan is made from a probe of its duration at 25 fps.
// Usage: npm run bench:audio-tracks [-- --seconds 3600 --runs 15 --format wav]

import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { planEncoding, segmentCount } from "../../media-plan/plan.mjs";
import { describeBinaries, resolveBinaries } from "../binaries.mjs";
import { startEncoder } from "../test/encoder-process.mjs";
import { startFakeWorker } from "../test/fake-worker.mjs";
import { writeTone } from "../test/media.mjs";

const { values: options } = parseArgs({
  options: {
    seconds: { type: "string", default: "600" },
    runs: { type: "string", default: "5,15,30" },
    format: { type: "string", default: "m4a" },
  },
});
const SECONDS = Number(options.seconds);
const LENGTHS = options.runs.split(",").map(Number);
const TOKEN = "bench-token-0123456789abcdef";

/** @param {number} ms */
const seconds = (ms) => `${(ms / 1000).toFixed(2)} s`;

/** @param {number[]} values */
function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? 0;
}

async function main() {
  const binaries = await resolveBinaries();
  console.log(`bench:audio-tracks: ${describeBinaries(binaries)}`);
  const dir = await mkdtemp(join(tmpdir(), "audio-bench-"));
  const fake = await startFakeWorker(join(dir, "received"));
  const encoder = await startEncoder({
    ENCODER_TMPDIR: dir,
    ENCODER_TOKEN: TOKEN,
    ENCODER_HEARTBEAT_MS: "5000",
    ENCODER_BACKGROUND_JOBS: "1",
  });
  try {
    const track = await writeTone(binaries.ffmpeg, join(dir, `track.${options.format}`), 880, SECONDS);
    const probe = {
      format: "mov",
      duration: SECONDS,
      startTime: 0,
      width: 1280,
      height: 720,
      frameRate: 25,
      videoStream: 0,
      audioStream: 1,
      interlaced: false,
    };
    const plan = planEncoding(probe, { enabledResolutions: ["360p"], mp4: false, watermark: null });
    const count = segmentCount(plan);
    console.log(
      `a ${SECONDS} s track (${options.format}, ${(track.length / 1e6).toFixed(1)} MB) over ${count} segments:`,
    );
    let jobs = 0;
    for (const length of LENGTHS) {
      const times = [];
      const started = performance.now();
      for (let from = 0; from < count; from += length) {
        const jobId = `audio-${++jobs}`;
        const { job, callback } = fake.addJob(jobId, { source: track, video: `track-${jobs}` });
        const began = performance.now();
        const response = await fetch(`${encoder.origin}/v2/jobs`, {
          method: "POST",
          headers: { "content-type": "application/json", authorization: `Bearer ${TOKEN}` },
          body: JSON.stringify({
            version: 2,
            jobId,
            kind: "audio",
            priority: "background",
            callback,
            plan,
            from,
            to: Math.min(count, from + length),
          }),
        });
        if (response.status !== 202) throw new Error(`job refused: ${response.status} ${await response.text()}`);
        const result = await job.resultReceived;
        if (result.status !== "done") throw new Error(`audio job failed: ${JSON.stringify(result)}`);
        times.push(performance.now() - began);
      }
      const total = performance.now() - started;
      console.log(
        `  runs of ${String(length).padStart(2)}: ${times.length} jobs, each ${seconds(median(times))} (median), ` +
          `${seconds(Math.max(...times))} at most; the track ${seconds(total)}, ${((total / 1000 / SECONDS) * 100).toFixed(1)}% of its duration`,
      );
    }
  } finally {
    await encoder.stop();
    await fake.close();
    await rm(dir, { recursive: true, force: true });
  }
}

await main();
