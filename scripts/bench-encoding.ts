// The encoding and playback parts of `npm run bench` (issues 18 and 24, "Benchmark"):
// - the pipeline: sources of 1, 10 and 60 minutes, each from the completion's answer to playable
//   (`video.playable`) and to ready (`video.ready`, every rendition and the MP4 stored), beside one
//   ffmpeg run over the whole file with the same plan on the same machine (encoder/bench/direct.mjs);
//   the encoder's peak memory and disk while it encodes the 10-minute one; a first segment asked
//   for at 0 and at 90% while the video is processing; and a projection to production from the
//   CPU time one minute of 1080p costs here;
// - playback: the service's master playlist and a segment of about 1 MiB beside the bench floor
//   Worker (scripts/bench-floor) reading the very same bytes from its R2.
// Figures, not pass/fail: the targets are printed beside them for people to read.
import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { defaultThreads, wholeRun } from "../encoder/bench/direct.mjs";
import type { SourceInput } from "../encoder/source.mjs";
import { storyboardSprite, tileArgs } from "../encoder/storyboard-args.mjs";
import { serveFile } from "../encoder/test/file-server.mjs";
import { makeClip } from "../encoder/test/media.mjs";
import { type Plan, segmentCount } from "../media-plan/plan.mjs";
import { keyedTenant } from "../test/e2e/client.ts";
import {
  binaries,
  ffmpeg,
  longClip,
  probe,
  uploadFile,
  uploadVideo,
  type Video,
  waitForStatus,
} from "../test/e2e/media.ts";
import { startReceiver } from "../test/e2e/receiver.ts";
import type { DevServer } from "../test/e2e/server.ts";
import { startFloorWorker } from "./floor-worker.ts";
import { percentile } from "./percentile.ts";
import { cpuSeconds } from "./proc.ts";

const MiB = 1024 * 1024;
/** The sources of the pipeline section; BENCH_SOURCES=1,10 runs only those lengths (minutes). */
const SOURCES = [
  { minutes: 1, width: 1920, height: 1080, resolutions: ["360p", "720p", "1080p"] },
  { minutes: 10, width: 1280, height: 720, resolutions: ["360p", "720p"] },
  { minutes: 60, width: 640, height: 360, resolutions: ["360p"] },
].filter((source) => (process.env.BENCH_SOURCES ?? "1,10,60").split(",").includes(String(source.minutes)));

const median = (values: number[]) =>
  percentile(
    [...values].sort((a, b) => a - b),
    50,
  );
const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
const mib = (bytes: number) => `${(bytes / MiB).toFixed(0)} MiB`;

type Tenant = Awaited<ReturnType<typeof keyedTenant>>;
type Receiver = Awaited<ReturnType<typeof startReceiver>>;
type EncodingEvent = { type: string; timestamp: string; data: Video };

/** A project whose endpoint delivers every event to a local receiver. */
export async function encodingTenant(baseUrl: string) {
  const receiver = await startReceiver(204);
  const tenant = await keyedTenant(baseUrl, { name: "bench-encoding" });
  await tenant.endpoint(receiver.url("/bench"));
  return { tenant, receiver };
}

/** The event of `type` about video `id` once it arrives (ready or errored end the wait). */
export async function eventOf(receiver: Receiver, id: string, type: string, seconds = 3600) {
  const deadline = Date.now() + seconds * 1000;
  while (Date.now() < deadline) {
    for (const delivery of receiver.received) {
      const event = JSON.parse(delivery.body) as EncodingEvent;
      if (event.data?.id !== id) continue;
      if (event.type === "video.errored") throw new Error(`video ${id} errored: ${JSON.stringify(event.data.error)}`);
      if (event.type === type) return event;
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error(`video ${id}: no ${type} within ${seconds} s`);
}

/** Resident memory (bytes) of a process and all its descendants, from /proc. */
function treeMemory(pid: number): number {
  let total = 0;
  try {
    total += Number(/^VmRSS:\s+(\d+)\s+kB$/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1] ?? 0) * 1024;
  } catch {
    return 0;
  }
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      if (Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]) === pid) total += treeMemory(Number(entry));
    } catch {
      // gone meanwhile
    }
  }
  return total;
}

/** Bytes under the encoder's job folders (`encoder-*` in the temporary folder). */
function encoderDisk(): number {
  let total = 0;
  for (const entry of readdirSync(tmpdir(), { withFileTypes: true })) {
    if (!entry.isDirectory() || !entry.name.startsWith("encoder-")) continue;
    // A job's folder (or a file in it) may go while it is read: it holds nothing then.
    try {
      for (const file of readdirSync(path.join(tmpdir(), entry.name), { recursive: true, withFileTypes: true })) {
        if (file.isFile()) total += statSync(path.join(file.parentPath, file.name)).size;
      }
    } catch {
      // removed meanwhile
    }
  }
  return total;
}

/**
 * CPU seconds the encoder process and its finished children (every ffmpeg and ffprobe it ran and
 * waited for) have used so far.
 */
function encoderCpuSeconds(pid: number): number {
  return cpuSeconds(pid, true);
}

/**
 * How fast the ready video's MP4 opens (docs/encoding.md#long-videos-playable-in-seconds: within
 * 5 s, for any length): ffprobe reading its duration over HTTP, and ffmpeg seeking to 80% of it and
 * decoding a frame (the encoder's own binaries, as the tests use them).
 */
async function mp4Opens(url: string, duration: number) {
  let start = performance.now();
  const probed = (await probe(url, ["-show_entries", "format=duration"])) as { format?: { duration?: string } };
  const probeMs = performance.now() - start;
  start = performance.now();
  await ffmpeg(["-v", "error", "-ss", (duration * 0.8).toFixed(3), "-i", url, "-frames:v", "1", "-f", "null", "-"]);
  return { probeMs, seekMs: performance.now() - start, probedDuration: Number(probed.format?.duration) };
}

/** One GET: its status and milliseconds to the end of its body. */
async function timed(url: string) {
  const started = performance.now();
  const response = await fetch(url);
  await response.arrayBuffer();
  return { status: response.status, ms: performance.now() - started };
}

/**
 * `ffmpeg args` run to the end, as from a shell: its wall time in ms and its CPU seconds (user +
 * system, from /usr/bin/time). Asynchronous: the source comes from a server in this process.
 */
export function timedFfmpeg(args: string[]): Promise<{ ms: number; cpu: number }> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const child = spawn("/usr/bin/time", ["-f", "cpu %U %S", binaries.ffmpeg.path, ...args], {
      stdio: ["ignore", "ignore", "pipe"],
      env: { ...process.env, ...binaries.ffmpeg.env },
    });
    let stderr = "";
    child.stderr.on("data", (chunk) => {
      stderr = (stderr + chunk).slice(-4096);
    });
    child.on("error", reject);
    child.on("close", (code) => {
      const times = /cpu ([0-9.]+) ([0-9.]+)\s*$/.exec(stderr);
      if (code !== 0 || !times) return reject(new Error(`ffmpeg exit ${code}: ${stderr.slice(-500)}`));
      resolve({ ms: performance.now() - started, cpu: Number(times[1]) + Number(times[2]) });
    });
  });
}

/**
 * The pipeline section: every source through the dev server and through one ffmpeg run; printed,
 * and returned for .bench/results.json. Runs with nothing else in flight, before any other case.
 */
export async function benchPipeline(server: DevServer) {
  const dir = mkdtempSync(path.join(tmpdir(), "bench-encoding-"));
  const { tenant, receiver } = await encodingTenant(server.baseUrl);
  const encoderPid = Number(/\[dev\] encoder pid (\d+)/.exec(server.output())?.[1]);
  const rows = [];
  let playbackVideo: { id: string; tenant: Tenant } | undefined;
  try {
    console.log(
      `encoding pipeline: ${binaries.ffmpeg.from} ffmpeg ${binaries.ffmpeg.version}; completion's answer → playable ` +
        "(video.playable's timestamp) and → ready (video.ready's), beside one ffmpeg run over the whole file",
    );
    for (const spec of SOURCES) {
      const file = await longClip({ width: spec.width, height: spec.height, seconds: spec.minutes * 60, rate: 30 });
      const settings = await tenant.owner.request("PATCH", `/v1/projects/${tenant.projectId}/encoding-settings`, {
        body: { enabledResolutions: spec.resolutions, mp4FallbackEnabled: true },
      });
      if (settings.status !== 200) throw new Error(`settings: ${settings.status} ${settings.text}`);

      // One ffmpeg over the whole file, the same plan, read by range from a local server.
      const served = await serveFile(file);
      let directMs: number;
      let directCpu = 0;
      let storyboardShare = 0;
      try {
        const whole = await wholeRun(binaries, {
          source: served.source,
          settings: { enabledResolutions: spec.resolutions, mp4: true, watermark: null },
          watermark: null,
          out: path.join(dir, "direct"),
        });
        const direct = await timedFfmpeg(whole.args);
        directMs = direct.ms;
        directCpu = direct.cpu;
        const board = await storyboardCost(whole.plan, served.source, path.join(dir, "storyboard"));
        storyboardShare = board.cpu / direct.cpu;
        console.log(
          `  ${spec.minutes} min ${spec.width}x${spec.height}: ${segmentCount(whole.plan)} segments a rendition; ` +
            `the storyboard (${board.tiles} tiles and the sprite) ${board.cpu.toFixed(1)} CPU-s, ` +
            `${(storyboardShare * 100).toFixed(1)}% of the encode's ${direct.cpu.toFixed(0)} CPU-s`,
        );
      } finally {
        await served.close();
      }

      let peakMemory = 0;
      let peakDisk = 0;
      const sampler = setInterval(() => {
        if (encoderPid) peakMemory = Math.max(peakMemory, treeMemory(encoderPid));
        peakDisk = Math.max(peakDisk, encoderDisk());
      }, 250);
      const cpuBefore = encoderCpuSeconds(encoderPid);
      const { video, completedAt } = await uploadFile(tenant.call, file);
      const playable = await eventOf(receiver, video.id, "video.playable");
      const playableMs = Date.parse(playable.timestamp) - completedAt;
      // A viewer's first segments, while the video is processing: at 0 and at 90%.
      const count = Math.ceil((playable.data.duration ?? 0) / 4);
      const lowest = spec.resolutions[0] as string;
      const first = await timed(`${server.baseUrl}/play/${video.id}/${lowest}/seg_00000.ts`);
      const late = await timed(
        `${server.baseUrl}/play/${video.id}/${lowest}/seg_${String(Math.floor(count * 0.9)).padStart(5, "0")}.ts`,
      );
      const ready = await eventOf(receiver, video.id, "video.ready");
      clearInterval(sampler);
      // Every job has reported by now: the encoder waited for each ffmpeg it ran.
      const pipelineCpu = encoderCpuSeconds(encoderPid) - cpuBefore;
      const readyMs = Date.parse(ready.timestamp) - completedAt;
      const mp4Url = ready.data.playback?.mp4;
      const opens = mp4Url ? await mp4Opens(mp4Url, spec.minutes * 60) : null;
      const row = {
        minutes: spec.minutes,
        size: `${spec.width}x${spec.height}`,
        resolutions: spec.resolutions,
        bytes: statSync(file).size,
        playableMs,
        firstSegmentMs: first.ms,
        segmentAt90Ms: late.ms,
        readyMs,
        directMs,
        ratio: readyMs / directMs,
        encoderPeakMemory: peakMemory,
        encoderPeakDisk: peakDisk,
        directCpuSeconds: directCpu,
        pipelineCpuSeconds: pipelineCpu,
        storyboardShare,
        mp4ProbeMs: opens?.probeMs ?? null,
        mp4SeekMs: opens?.seekMs ?? null,
      };
      rows.push(row);
      console.log(
        `  ${spec.minutes} min: playable ${seconds(playableMs)} (target <= 10 s); segment 0 in ${seconds(first.ms)}, ` +
          `at 90% in ${seconds(late.ms)}; ready ${seconds(readyMs)}; one ffmpeg ${seconds(directMs)}; ` +
          `ready/ffmpeg ${row.ratio.toFixed(2)}x (target <= 1.5x); encoder peak ${mib(peakMemory)} memory, ${mib(peakDisk)} disk; ` +
          `CPU: the pipeline's jobs ${pipelineCpu.toFixed(0)} s, one ffmpeg ${directCpu.toFixed(0)} s; ` +
          (opens
            ? `MP4 opens: ffprobe's duration (${opens.probedDuration.toFixed(1)} s) in ${seconds(opens.probeMs)}, a seek to 80% in ${seconds(opens.seekMs)} (target <= 5 s each)`
            : "no MP4"),
      );
      if (spec.minutes === 1) playbackVideo = { id: video.id, tenant };
      rmSync(file, { force: true });
    }
    const oneMinute = rows.find((row) => row.minutes === 1);
    const projection = oneMinute ? project(oneMinute.pipelineCpuSeconds) : null;
    return { summary: { sources: rows, projection }, playbackVideo };
  } finally {
    await receiver.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * What a video's storyboard costs, made by the encoder's own runs (`tileArgs`: a still per cue at
 * the tile size, then `storyboardSprite`), one after the other; CPU seconds in all.
 */
async function storyboardCost(plan: Plan, source: SourceInput, dir: string) {
  mkdirSync(dir, { recursive: true });
  const common = { plan, source, watermark: null, threads: defaultThreads(), features: binaries.features };
  const sprite = storyboardSprite(plan, dir);
  let cpu = 0;
  for (let cue = 0; cue < sprite.tiles; cue++) cpu += (await timedFfmpeg(tileArgs(common, cue, sprite.tile(cue)))).cpu;
  cpu += (await timedFfmpeg(sprite.args)).cpu;
  return { tiles: sprite.tiles, cpu };
}

/**
 * Frames at a time (docs/encoding.md#frames-and-the-storyboard) of a ready video: `count` times
 * spread over it, each asked once (the first ask makes the frame: the coordinator runs a still job)
 * and then asked again `samples` times in turn (served from R2); milliseconds, median and p95 of
 * each.
 */
export async function benchFrames(baseUrl: string, videoId: string, duration: number, count: number, samples: number) {
  const urls = Array.from(
    { length: count },
    (_, i) => `${baseUrl}/play/${videoId}/thumbnail?time=${(((i + 0.5) * duration) / count).toFixed(3)}&width=640`,
  );
  const first: number[] = [];
  for (const url of urls) first.push(await timedGet(url));
  const again: number[] = [];
  for (let i = 0; i < samples; i++) again.push(await timedGet(urls[i % urls.length] as string));
  const stats = (values: number[]) => {
    const sorted = [...values].sort((a, b) => a - b);
    return { median: percentile(sorted, 50), p95: percentile(sorted, 95) };
  };
  const result = { count, samples, first: stats(first), again: stats(again) };
  console.log(
    `\nframes at a time (${count} times over a ${duration.toFixed(0)} s ready video, 640 px wide): first ask median ` +
      `${result.first.median.toFixed(0)} ms, p95 ${result.first.p95.toFixed(0)} ms (target <= 5 s); asked again ` +
      `(${samples} samples) median ${result.again.median.toFixed(1)} ms, p95 ${result.again.p95.toFixed(1)} ms ` +
      "(beside the playback floor: its row below)",
  );
  return result;
}

/**
 * A one-hour 1080p source in production, from the CPU seconds one minute of it (the default
 * ladder, 360p to 1080p) took here: its time to ready on the slots one video may use, and what it
 * costs by Cloudflare's published Containers prices (standard-2: 1 vCPU, 6 GiB, 12 GB disk;
 * $0.000020 a vCPU-second, $0.0000025 a GiB-second, $0.00000007 a GB-second of disk).
 */
function project(cpuPerMinute: number) {
  const slotsPerVideo = 10;
  const cpu = cpuPerMinute * 60;
  // One vCPU per instance: an instance's wall time is about its CPU time; the work splits evenly.
  const wallSeconds = cpu / slotsPerVideo;
  const cost = cpu * 0.00002 + cpu * 6 * 0.0000025 + cpu * 12 * 0.00000007;
  const projection = { cpuPerMinute, cpuSecondsPerHour: cpu, slotsPerVideo, readySeconds: wallSeconds, costUsd: cost };
  console.log(
    `  production projection: a minute of 1080p (360p+720p+1080p and the MP4) took the pipeline's jobs ${cpuPerMinute.toFixed(0)} CPU-s here, so an hour ` +
      `is ${cpu.toFixed(0)} vCPU-s: ready in about ${seconds(wallSeconds * 1000)} on ${slotsPerVideo} instances ` +
      `(ENCODER_VIDEO_SLOTS), $${cost.toFixed(3)} by the published prices (plus R2)`,
  );
  return projection;
}

/**
 * What the playback cases read: a ready 1080p video (the pipeline section's, else one made now),
 * its segment nearest 1 MiB, a playback token's master playlist URL, and the MP4 of a small video
 * of a project with the MP4 fallback on (changed after the pipeline's runs, which keep the defaults).
 */
export async function preparePlayback(server: DevServer, made?: { id: string; tenant: Tenant }) {
  const dir = mkdtempSync(path.join(tmpdir(), "bench-playback-"));
  try {
    let tenant = made?.tenant;
    let id = made?.id;
    if (!tenant || !id) {
      const fresh = await encodingTenant(server.baseUrl);
      tenant = fresh.tenant;
      try {
        const source = await makeClip(binaries.ffmpeg, path.join(dir, "1080p.mp4"), {
          width: 1920,
          height: 1080,
          seconds: 10,
          rate: 30,
        });
        id = (await uploadVideo(tenant.call, new Uint8Array(source))).id;
        await waitForStatus(tenant.call, id, ["ready"], 300);
      } finally {
        await fresh.receiver.close();
      }
    }
    const video = (await tenant.call("GET", `/v1/videos/${id}`)).json as Video;
    const segment = await segmentNearOneMiB(
      server.baseUrl,
      id,
      video.renditions.map((r) => r.resolution),
    );
    const token = await tenant.call("POST", `/v1/videos/${id}/playback-tokens`, { expiresIn: 86_400 });
    if (token.status !== 201) throw new Error(`playback token: ${token.status} ${token.text}`);
    const settings = await tenant.owner.request("PATCH", `/v1/projects/${tenant.projectId}/encoding-settings`, {
      body: { mp4FallbackEnabled: true },
    });
    if (settings.status !== 200) throw new Error(`settings: ${settings.status} ${settings.text}`);
    const small = await makeClip(binaries.ffmpeg, path.join(dir, "small.mp4"), { width: 640, height: 360, seconds: 3 });
    const { id: mp4Id } = await uploadVideo(tenant.call, new Uint8Array(small));
    const mp4Url = (await waitForStatus(tenant.call, mp4Id, ["ready"], 120)).playback?.mp4;
    if (!mp4Url) throw new Error(`video ${mp4Id}: no MP4`);
    return { id, duration: video.duration ?? 0, segment, tokenHls: token.json.hls as string, mp4Url };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The segment of a ready video whose size is nearest 1 MiB, from its variant playlists. */
async function segmentNearOneMiB(baseUrl: string, videoId: string, renditions: string[]) {
  let best = { path: "", bytes: Number.POSITIVE_INFINITY };
  for (const rendition of renditions) {
    const playlist = await (await fetch(`${baseUrl}/play/${videoId}/${rendition}/index.m3u8`)).text();
    for (const segment of playlist.match(/seg_\d+\.ts/g) ?? []) {
      const head = await fetch(`${baseUrl}/play/${videoId}/${rendition}/${segment}`, { method: "HEAD" });
      const bytes = Number(head.headers.get("content-length"));
      if (Math.abs(bytes - MiB) < Math.abs(best.bytes - MiB)) best = { path: `${rendition}/${segment}`, bytes };
    }
  }
  if (!best.path) throw new Error(`video ${videoId}: no segment`);
  return best;
}

/** One GET, its body read to the end: milliseconds. */
async function timedGet(url: string, expect = 200) {
  const start = performance.now();
  const response = await fetch(url);
  await response.arrayBuffer();
  const ms = performance.now() - start;
  if (response.status !== expect) throw new Error(`${url}: ${response.status}`);
  return ms;
}

/** What each sample of the playback comparison times, in this order. */
const TIMED = ["bare", "service", "floorBare", "floor", "floorD1"] as const;
type Timed = (typeof TIMED)[number];

/**
 * Each playback file beside the floor Worker reading the same bytes from its own R2 (seeded with
 * what the service served), all under `wrangler dev` here. Every sample calls, in turn: the
 * service's bare 404, the service's file, the floor's bare 404, the floor's R2 read, the floor's D1
 * read then R2 read; medians of each, so drift over the run moves all five alike.
 */
export async function comparePlaybackWithFloor(baseUrl: string, videoId: string, files: string[], samples: number) {
  const floor = await startFloorWorker();
  const warmup = 10;
  try {
    console.log(
      `\nplayback vs the floor Worker (scripts/bench-floor: the same bytes from its R2, nothing else), both under wrangler dev; ` +
        `${samples} interleaved samples after ${warmup} warm-up calls, medians in ms`,
    );
    const widths = [18, 7, 8, 6, 9, 6, 6, 7, 10, 17, 6, 6];
    const row = (cells: string[]) =>
      console.log(cells.map((cell, i) => (i === 0 ? cell.padEnd(18) : cell.padStart(widths[i] ?? 7))).join(" "));
    row([
      "file",
      "bytes",
      "service",
      "bare",
      "floor R2",
      "bare",
      "D1+R2",
      "svc/R2",
      "svc/D1+R2",
      "above bare: svc",
      "R2",
      "D1+R2",
    ]);
    const results = [];
    for (const file of files) {
      const url = `${baseUrl}/play/${videoId}/${file}`;
      const served = await fetch(url);
      const bytes = new Uint8Array(await served.arrayBuffer());
      await floor.seed(file, bytes, served.headers.get("content-type") ?? "application/octet-stream");
      const times: Record<Timed, number[]> = { bare: [], service: [], floorBare: [], floor: [], floorD1: [] };
      for (let i = 0; i < warmup + samples; i++) {
        const sample: Record<Timed, number> = {
          bare: await timedGet(`${baseUrl}/v1/no-such-route`, 404),
          service: await timedGet(url),
          floorBare: await floor.call("/bare"),
          floor: await floor.call(`/object?key=${encodeURIComponent(file)}`),
          floorD1: await floor.call(`/object?key=${encodeURIComponent(file)}&d1=1`),
        };
        if (i >= warmup) for (const name of TIMED) times[name].push(sample[name]);
      }
      const m = Object.fromEntries(TIMED.map((name) => [name, median(times[name])])) as Record<Timed, number>;
      const ratio = m.service / m.floor;
      results.push({ file, bytes: bytes.byteLength, ...m, ratio, ratioToD1R2: m.service / m.floorD1 });
      row([
        file,
        String(bytes.byteLength),
        ...[m.service, m.bare, m.floor, m.floorBare, m.floorD1].map((ms) => ms.toFixed(2)),
        ...[ratio, m.service / m.floorD1].map((x) => x.toFixed(2)),
        ...[m.service - m.bare, m.floor - m.floorBare, m.floorD1 - m.floorBare].map((ms) => ms.toFixed(2)),
      ]);
    }
    console.log(
      "svc/R2: the service's median over the floor's, which only reads the file from R2 (target <= 1.3); svc/D1+R2: over\n" +
        "  the floor that also makes the playback routes' one D1 read (the video: live, visible, ready); above bare: each\n" +
        "  median less its own Worker's bare 404 (the service's runs its app's middleware, the floor's nothing)",
    );
    return results;
  } finally {
    floor.stop();
  }
}
