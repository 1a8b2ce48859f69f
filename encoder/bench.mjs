// @ts-check
// How much the encoder adds to ffmpeg. For a 10 s 720p clip with audio (settings: 360p, 720p
// and 1080p enabled, MP4 and a watermark on), it times, as medians of --runs runs:
//   direct    the encoder's ffmpeg command line run on its own (nothing read from it)
//   ffmpeg    the same command as the encoder runs it (progress read, memory sampled)
//   pipeline  a whole job through the real server and a local fake Worker: download, probe,
//             ffmpeg, output checks, master playlist, uploads, result
// and prints pipeline ÷ direct (the target is at most 1.25). Then one job on a 1080p source
// (and with --8k a 7680×4320 one) for ffmpeg's peak memory.
// Usage: npm run bench:encoder [-- --runs 3 --8k]

import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { describeBinaries, resolveBinaries } from "./binaries.mjs";
import { directArgs, runDirect } from "./direct.mjs";
import { runFfmpeg } from "./encode.mjs";
import { startEncoder } from "./test/encoder-process.mjs";
import { startFakeWorker } from "./test/fake-worker.mjs";
import { makeClip, makeWatermark } from "./test/media.mjs";

/** @typedef {import("./protocol.mjs").Job["settings"]} Settings */

const { values: options } = parseArgs({
  options: { runs: { type: "string", default: "3" }, "8k": { type: "boolean", default: false } },
});
const RUNS = Number(options.runs);
/** @type {Settings} */
const SETTINGS = {
  enabledResolutions: ["360p", "720p", "1080p"],
  mp4: true,
  watermark: { position: "bottom-right", opacity: 0.8 },
};

/** @param {number[]} xs */
function median(xs) {
  const sorted = [...xs].sort((a, b) => a - b);
  return /** @type {number} */ (sorted[Math.floor(sorted.length / 2)]);
}

/** @param {number} ms */
const seconds = (ms) => `${(ms / 1000).toFixed(2)} s`;
/** @param {number | null} bytes */
const mib = (bytes) => (bytes === null ? "unknown" : `${(bytes / 1024 / 1024).toFixed(0)} MiB`);

/**
 * One job through the real server; resolves with its wall time and the result.
 * @param {Awaited<ReturnType<typeof startEncoder>>} encoder
 * @param {Awaited<ReturnType<typeof startFakeWorker>>} fake
 * @param {string} jobId
 * @param {Buffer} source
 * @param {Buffer} watermark
 */
async function job(encoder, fake, jobId, source, watermark) {
  const { job: fakeJob, callback } = fake.addJob(jobId, { source, watermark });
  const started = performance.now();
  const response = await fetch(`${encoder.origin}/v1/jobs`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ version: 1, jobId, attempt: 1, callback, settings: SETTINGS }),
  });
  if (response.status !== 202) throw new Error(`job refused: ${response.status} ${await response.text()}`);
  const result = await fakeJob.resultReceived;
  const ms = performance.now() - started;
  if (result.status !== "ready") throw new Error(`job failed: ${JSON.stringify(result)}`);
  // The next job waits until this one has cleaned up.
  for (let i = 0; i < 200; i++) {
    const health = /** @type {{ busy: boolean }} */ (await (await fetch(`${encoder.origin}/healthz`)).json());
    if (!health.busy) break;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return { ms, result };
}

async function main() {
  const binaries = await resolveBinaries();
  console.log(`bench: ${describeBinaries(binaries)}`);
  const dir = await mkdtemp(join(tmpdir(), "encoder-bench-"));
  const fake = await startFakeWorker(join(dir, "received"));
  const encoder = await startEncoder({ ENCODER_TMPDIR: dir, ENCODER_HEARTBEAT_MS: "5000" });
  try {
    const watermarkFile = join(dir, "watermark.png");
    const watermark = await makeWatermark(binaries.ffmpeg, watermarkFile, "red");
    const clipFile = join(dir, "720p.mp4");
    const clip = await makeClip(binaries.ffmpeg, clipFile, { width: 1280, height: 720, seconds: 10, rate: 30 });
    console.log(`source: 10 s 1280x720 30 fps H.264 + AAC; settings ${JSON.stringify(SETTINGS)}; ${RUNS} runs each`);

    /** @type {number[]} */ const directMs = [];
    /** @type {number[]} */ const ffmpegMs = [];
    /** @type {number[]} */ const pipelineMs = [];
    /** @type {(number | null)[]} */ const peaks = [];
    for (let run = 0; run < RUNS; run++) {
      const out = join(dir, "out");
      const args = () => directArgs(binaries, { source: clipFile, settings: SETTINGS, watermark: watermarkFile, out });
      directMs.push(await runDirect(binaries, await args()));
      const encoded = await runFfmpeg(binaries.ffmpeg, await args());
      if (!encoded.ok) throw new Error(`${encoded.failure}: ${encoded.stderr}`);
      ffmpegMs.push(encoded.elapsedMs);
      const { ms, result } = await job(encoder, fake, `bench-${run}`, clip, watermark);
      pipelineMs.push(ms);
      peaks.push(result.status === "ready" ? result.peakMemoryBytes : null);
      console.log(
        `run ${run + 1}: direct ${seconds(directMs[run] ?? 0)}, ffmpeg in the encoder ${seconds(encoded.elapsedMs)}, pipeline ${seconds(ms)}`,
      );
    }
    const ratio = median(pipelineMs) / median(directMs);
    console.log(
      `median: direct ${seconds(median(directMs))}, ffmpeg in the encoder ${seconds(median(ffmpegMs))}, pipeline ${seconds(median(pipelineMs))}; pipeline/direct ${ratio.toFixed(2)}x (target <= 1.25x); ffmpeg peak ${mib(peaks[0] ?? null)}`,
    );

    const big = [{ name: "1080p", width: 1920, height: 1080, seconds: 5, rate: 30 }];
    if (options["8k"]) big.push({ name: "8K", width: 7680, height: 4320, seconds: 2, rate: 10 });
    for (const source of big) {
      const file = join(dir, `${source.name}.mp4`);
      await makeClip(binaries.ffmpeg, file, source);
      const { ms, result } = await job(encoder, fake, `bench-${source.name}`, await readFile(file), watermark);
      if (result.status !== "ready") continue;
      console.log(
        `${source.name} source (${source.width}x${source.height}, ${source.seconds} s at ${source.rate} fps): ${result.renditions.map((r) => r.resolution).join(" ")} + MP4 in ${seconds(ms)}, ffmpeg peak memory ${mib(result.peakMemoryBytes)}`,
      );
    }
  } finally {
    await encoder.stop();
    await fake.close();
    await rm(dir, { recursive: true, force: true });
  }
}

await main();
