// The encoding and playback parts of `npm run bench` (issue 18, "Benchmark"):
// - pipeline overhead: a 10 s 720p clip with audio under a new project's default settings, from the
//   completion request's answer to `ready`, beside the same ffmpeg command line run directly;
// - ffmpeg's peak memory for a 1080p source, as the encoder itself measures it;
// - playback: the service's master playlist and a segment of about 1 MiB beside the bench floor
//   Worker (scripts/bench-floor) reading the very same bytes from its R2.
// Figures, not pass/fail: the targets are printed beside them for people to read.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { directArgs, runDirect } from "../encoder/direct.mjs";
import { makeClip } from "../encoder/test/media.mjs";
import { keyedTenant } from "../test/e2e/client.ts";
import { binaries, uploadVideo, type Video, waitForStatus } from "../test/e2e/media.ts";
import { startReceiver } from "../test/e2e/receiver.ts";
import type { DevServer } from "../test/e2e/server.ts";
import { startFloorWorker } from "./floor-worker.ts";
import { percentile } from "./percentile.ts";

const RUNS = Number(process.env.BENCH_ENCODE_RUNS ?? 3);
const MiB = 1024 * 1024;

const median = (values: number[]) =>
  percentile(
    [...values].sort((a, b) => a - b),
    50,
  );
const seconds = (ms: number) => `${(ms / 1000).toFixed(2)} s`;
const mib = (bytes: number) => `${(bytes / MiB).toFixed(1)} MiB`;

type Tenant = Awaited<ReturnType<typeof keyedTenant>>;
type Receiver = Awaited<ReturnType<typeof startReceiver>>;
type ReadyEvent = { type: string; timestamp: string; data: Video };
type JobSettings = Parameters<typeof directArgs>[1]["settings"];
type ProjectSettings = {
  enabledResolutions: JobSettings["enabledResolutions"];
  mp4FallbackEnabled: boolean;
  watermark: { enabled: boolean };
};

/**
 * The settings the Worker sends the encoder for the tenant's project, read from the API (a new
 * project's are the defaults), so the direct command is built from what the pipeline runs with.
 */
async function jobSettings(tenant: Tenant): Promise<JobSettings> {
  const read = await tenant.owner.request("GET", `/v1/projects/${tenant.projectId}/encoding-settings`);
  if (read.status !== 200) throw new Error(`settings: ${read.status} ${read.text}`);
  const settings = read.json as ProjectSettings;
  if (settings.watermark.enabled) throw new Error("the bench expects no watermark");
  return { enabledResolutions: settings.enabledResolutions, mp4: settings.mp4FallbackEnabled, watermark: null };
}

/** A project with default settings whose endpoint delivers every event to a local receiver. */
async function encodingTenant(baseUrl: string) {
  const receiver = await startReceiver(204);
  const tenant = await keyedTenant(baseUrl, { name: "bench-encoding" });
  await tenant.endpoint(receiver.url("/bench"));
  return { tenant, receiver };
}

/** The video's ready (or errored) event once it arrives, with the moment it arrived (ms since the epoch). */
async function outcomeOf(receiver: Receiver, id: string, seconds = 300) {
  const deadline = Date.now() + seconds * 1000;
  while (Date.now() < deadline) {
    for (const delivery of receiver.received) {
      const event = JSON.parse(delivery.body) as ReadyEvent;
      if (event.data?.id !== id || (event.type !== "video.ready" && event.type !== "video.errored")) continue;
      if (event.type !== "video.ready") throw new Error(`video ${id} errored: ${JSON.stringify(event.data.error)}`);
      return { event, arrivedAt: delivery.at };
    }
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  throw new Error(`video ${id}: no video.ready within ${seconds} s`);
}

/** What the encoder logged of the job's ffmpeg run (encoder/job.mjs): its wall time and peak memory. */
function encoderLog(server: DevServer, id: string) {
  const match = new RegExp(
    `job ${id}#(\\d+) encoded [^\\n]* in (\\d+) ms, ffmpeg peak memory (\\d+|unknown) bytes`,
  ).exec(server.output());
  if (!match) return null;
  return { attempt: Number(match[1]), ffmpegMs: Number(match[2]), peakBytes: Number(match[3]) };
}

/**
 * One video through the whole pipeline: created, its source put in one part, completed; then the
 * queue, the encoder (download, probe, ffmpeg, uploads through the Worker) and the result.
 * `readyMs` ends at the ready change as the Worker recorded it (its `updatedAt`, written in the
 * same batch as the status); `webhookMs` at the video.ready delivery's arrival.
 */
async function throughPipeline(server: DevServer, tenant: Tenant, receiver: Receiver, source: Uint8Array) {
  const { id } = await uploadVideo(tenant.call, source);
  const completedAt = Date.now();
  const { event, arrivedAt } = await outcomeOf(receiver, id);
  return {
    id,
    video: event.data,
    readyMs: Date.parse(event.timestamp) - completedAt,
    webhookMs: arrivedAt - completedAt,
    encoder: encoderLog(server, id),
  };
}

/**
 * A 10 s 1080p clip with audio through the pipeline under default settings (360p, 720p, 1080p):
 * the encoder's ffmpeg peak memory, and a ready video whose 720p segments are about 1 MiB.
 */
async function encode1080p(server: DevServer, tenant: Tenant, receiver: Receiver, dir: string) {
  const source = await makeClip(binaries.ffmpeg, path.join(dir, "1080p.mp4"), {
    width: 1920,
    height: 1080,
    seconds: 10,
    rate: 30,
  });
  return throughPipeline(server, tenant, receiver, new Uint8Array(source));
}

/**
 * Pipeline overhead, printed; returns its figures and the 1080p video (ready, for playback).
 * Runs on the dev server with nothing else in flight, before any other case.
 */
export async function benchPipeline(server: DevServer) {
  const dir = mkdtempSync(path.join(tmpdir(), "bench-encoding-"));
  const { tenant, receiver } = await encodingTenant(server.baseUrl);
  try {
    const clipFile = path.join(dir, "720p.mp4");
    const clip = new Uint8Array(
      await makeClip(binaries.ffmpeg, clipFile, { width: 1280, height: 720, seconds: 10, rate: 30 }),
    );
    const settings = await jobSettings(tenant);
    console.log(
      `encoding pipeline: 10 s 1280x720 30 fps H.264 + AAC, default settings ${JSON.stringify(settings)}, ` +
        `${RUNS} runs (BENCH_ENCODE_RUNS); ${binaries.ffmpeg.from} ffmpeg ${binaries.ffmpeg.version}`,
    );
    console.log(
      "  pipeline: completion answer → the Worker's ready change (its updatedAt, same clock); webhook: → video.ready received",
    );
    console.log(
      "  direct: encoder/direct.mjs, the encoder's ffmpeg command line for the same file, run as from a shell",
    );
    const direct: number[] = [];
    const ready: number[] = [];
    const webhook: number[] = [];
    const inEncoder: number[] = [];
    for (let run = 0; run < RUNS; run++) {
      const args = await directArgs(binaries, {
        source: clipFile,
        settings,
        watermark: null,
        out: path.join(dir, "direct"),
      });
      direct.push(await runDirect(binaries, args));
      const piped = await throughPipeline(server, tenant, receiver, clip);
      const renditions = piped.video.renditions.map((r) => r.resolution).join("+");
      ready.push(piped.readyMs);
      webhook.push(piped.webhookMs);
      if (piped.encoder) inEncoder.push(piped.encoder.ffmpegMs);
      console.log(
        `  run ${run + 1}: direct ${seconds(direct[run] ?? 0)}, pipeline ${seconds(piped.readyMs)} ` +
          `(ffmpeg in the encoder ${piped.encoder ? seconds(piped.encoder.ffmpegMs) : "not logged"}, ` +
          `attempt ${piped.encoder?.attempt ?? "?"}), webhook ${seconds(piped.webhookMs)}; ${renditions}`,
      );
    }
    const ratio = median(ready) / median(direct);
    console.log(
      `  median: direct ${seconds(median(direct))}, pipeline ${seconds(median(ready))} ` +
        `(ffmpeg in the encoder ${seconds(median(inEncoder))}), webhook ${seconds(median(webhook))}; ` +
        `pipeline/direct ${ratio.toFixed(2)}x (target <= 1.25x), webhook/direct ${(median(webhook) / median(direct)).toFixed(2)}x`,
    );

    const big = await encode1080p(server, tenant, receiver, dir);
    const peak = big.encoder?.peakBytes ?? Number.NaN;
    console.log(
      `  1080p source (1920x1080, 10 s at 30 fps, audio), default settings: ${big.video.renditions.map((r) => r.resolution).join("+")} ` +
        `ready in ${seconds(big.readyMs)}; ffmpeg peak memory ${Number.isNaN(peak) ? "not logged" : mib(peak)} ` +
        "(VmHWM of the ffmpeg process, sampled by the encoder every 200 ms and at its end; from the encoder's log)",
    );
    return {
      summary: {
        runs: RUNS,
        settings,
        directMs: direct,
        pipelineMs: ready,
        webhookMs: webhook,
        ffmpegInEncoderMs: inEncoder,
        ratio,
        peak1080pBytes: peak,
      },
      playbackVideo: { id: big.id, tenant },
    };
  } finally {
    await receiver.close();
    rmSync(dir, { recursive: true, force: true });
  }
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
        id = (await encode1080p(server, tenant, fresh.receiver, dir)).id;
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
    return { id, segment, tokenHls: token.json.hls as string, mp4Url };
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
