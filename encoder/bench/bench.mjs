// @ts-check
// What segment-by-segment encoding costs against one ffmpeg run over the whole file, on this
// machine, and what an encoder instance holds meanwhile. For a test-pattern source (default 60 s
// of 1920×1080 at 30 fps with audio; settings 360p, 720p, 1080p and the MP4), it prints:
//   direct    one ffmpeg run making every segment of every rendition (encoder/bench/direct.mjs)
//   jobs      the same work as the encoder does it through a local fake Worker: the probe, the
//             background runs (as many at once as the encoder takes), then the MP4 from the
//             segments, then the M4A (the audio only, docs/audio-only.md) from them; each
//             segment sent as it is made, the source read by range
//   ratio     jobs ÷ direct, with the M4A (made after the MP4, as on one background slot; the
//             worst case: with two it runs beside the MP4) and without it
//   peak      the encoder's memory (its process and its ffmpegs, summed) and its disk (the job
//             folders), sampled every 200 ms
// Usage: npm run bench:encoder [-- --seconds 600 --height 720 --rate 30]

import { readdirSync, readFileSync, statSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { availableParallelism, tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { partSize } from "../../media-plan/files.mjs";
import { runLength, segmentCount } from "../../media-plan/plan.mjs";
import { describeBinaries, resolveBinaries } from "../binaries.mjs";
import { childrenOf, startEncoder } from "../test/encoder-process.mjs";
import { startFakeWorker } from "../test/fake-worker.mjs";
import { makeFileParts } from "../test/file-parts.mjs";
import { makeClip } from "../test/media.mjs";
import { runDirect, wholeRun } from "./direct.mjs";

const { values: options } = parseArgs({
  options: {
    seconds: { type: "string", default: "60" },
    height: { type: "string", default: "1080" },
    rate: { type: "string", default: "30" },
  },
});
const SECONDS = Number(options.seconds);
const HEIGHT = Number(options.height);
const WIDTH = Math.round((HEIGHT * 16) / 9 / 2) * 2;
const RATE = Number(options.rate);
/** @type {import("../../media-plan/plan.mjs").PlanSettings} */
const SETTINGS = { enabledResolutions: ["360p", "720p", "1080p"], mp4: true, watermark: null };
const TOKEN = "bench-token-0123456789abcdef";

/** @param {number} ms */
const seconds = (ms) => `${(ms / 1000).toFixed(1)} s`;
/** @param {number} bytes */
const mib = (bytes) => `${(bytes / 1024 / 1024).toFixed(1)} MiB`;

/** Resident memory of a process and all its descendants, in bytes. @param {number} pid @returns {number} */
function treeMemory(pid) {
  let total = 0;
  try {
    const match = /^VmRSS:\s+(\d+)\s+kB$/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
    total += match ? Number(match[1]) * 1024 : 0;
  } catch {
    return 0;
  }
  for (const child of childrenOf(pid)) total += treeMemory(child);
  return total;
}

/** Bytes of the files under `dir`. @param {string} dir */
function diskUse(dir) {
  let total = 0;
  for (const entry of readdirSync(dir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    try {
      total += statSync(join(entry.parentPath, entry.name)).size;
    } catch {
      // removed while we looked
    }
  }
  return total;
}

async function main() {
  const binaries = await resolveBinaries();
  console.log(`bench: ${describeBinaries(binaries)}`);
  const dir = await mkdtemp(join(tmpdir(), "encoder-bench-"));
  const jobsDir = await mkdtemp(join(tmpdir(), "encoder-bench-jobs-"));
  const fake = await startFakeWorker(join(dir, "received"));
  const encoder = await startEncoder({ ENCODER_TMPDIR: jobsDir, ENCODER_HEARTBEAT_MS: "5000", ENCODER_TOKEN: TOKEN });
  try {
    const file = join(dir, "source.mp4");
    console.log(`making the source: ${SECONDS} s of ${WIDTH}x${HEIGHT} at ${RATE} fps with audio…`);
    const source = await makeClip(binaries.ffmpeg, file, {
      width: WIDTH,
      height: HEIGHT,
      seconds: SECONDS,
      rate: RATE,
    });
    const post = async (/** @type {Record<string, unknown>} */ body) => {
      const response = await fetch(`${encoder.origin}/v2/jobs`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${TOKEN}` },
        body: JSON.stringify({ version: 2, ...body }),
      });
      if (response.status !== 202) throw new Error(`job refused: ${response.status} ${await response.text()}`);
    };
    let jobs = 0;
    /**
     * @param {string} kind @param {"interactive" | "background"} priority @param {Record<string, unknown>} extra
     * @param {import("../../media-plan/protocol.mjs").Fragment[]} [index] a file's index, for its first part
     */
    const run = async (kind, priority, extra, index) => {
      const jobId = `bench-${++jobs}`;
      const { job, callback } = fake.addJob(jobId, { source, video: "video", index });
      await post({ jobId, kind, priority, callback, ...extra });
      const result = await job.resultReceived;
      if (result.status !== "done") throw new Error(`${kind} job failed: ${JSON.stringify(result)}`);
      return result;
    };

    // The baseline: one ffmpeg over the whole file.
    const { callback } = fake.addJob("direct", { source, video: "direct" });
    const whole = await wholeRun(binaries, {
      source: { url: `${callback.baseUrl}/source`, token: callback.token },
      settings: SETTINGS,
      watermark: null,
      out: join(dir, "direct"),
    });
    const directMs = await runDirect(binaries, whole.args);
    console.log(`direct: ${seconds(directMs)}`);

    let peakMemory = 0;
    let peakDisk = 0;
    const sampler = setInterval(() => {
      peakMemory = Math.max(peakMemory, treeMemory(encoder.pid));
      peakDisk = Math.max(peakDisk, diskUse(jobsDir));
    }, 200);
    const started = performance.now();
    await run("probe", "interactive", {});
    const plan = whole.plan;
    const probeMs = performance.now() - started;
    const count = segmentCount(plan);
    const length = runLength(plan);
    /** @type {{ from: number, to: number }[]} */
    const runs = [];
    for (let from = 0; from < count; from += length) runs.push({ from, to: Math.min(count, from + length) });
    const atOnce = availableParallelism();
    let next = 0;
    await Promise.all(
      Array.from({ length: atOnce }, async () => {
        while (next < runs.length) {
          const { from, to } = /** @type {{ from: number, to: number }} */ (runs[next++]);
          await run("segments", "background", { plan, from, to, renditions: plan.renditions.map((r) => r.resolution) });
        }
      }),
    );
    const segmentsMs = performance.now() - started;
    // Each file a part per job, as the Worker asks for them.
    const makeFile = async (/** @type {"mp4" | "m4a"} */ kind) => {
      const { parts } = await makeFileParts(count, async (step, index) => {
        const result = await run(kind, "background", { plan, partSize: partSize(plan, kind), ...step }, index);
        return /** @type {import("../../media-plan/protocol.mjs").FilePart} */ (result[kind]);
      });
      return parts.reduce((sum, part) => sum + part.fragments.reduce((bytes, f) => bytes + f.size, 0), 0);
    };
    const mp4Bytes = await makeFile("mp4");
    const mp4Ms = performance.now() - started;
    const m4aBytes = await makeFile("m4a");
    const jobsMs = performance.now() - started;
    clearInterval(sampler);
    const largest = Math.max(...fake.calls.map((call) => call.bytes));
    console.log(
      `jobs: probe ${seconds(probeMs)}, ${runs.length} runs of ${length} segments ${seconds(segmentsMs - probeMs)} (${atOnce} at once), MP4 ${seconds(mp4Ms - segmentsMs)} (${mib(mp4Bytes)}), M4A ${seconds(jobsMs - mp4Ms)} (${mib(m4aBytes)}); all ${seconds(jobsMs)}`,
    );
    console.log(
      `ratio: jobs ÷ direct = ${(jobsMs / directMs).toFixed(2)}x (${(mp4Ms / directMs).toFixed(2)}x without the M4A)`,
    );
    console.log(
      `peak: encoder memory ${mib(peakMemory)}, encoder disk ${mib(peakDisk)}; largest request body ${mib(largest)}`,
    );
  } finally {
    await encoder.stop();
    await fake.close();
    await rm(dir, { recursive: true, force: true });
    await rm(jobsDir, { recursive: true, force: true });
  }
}

await main();
