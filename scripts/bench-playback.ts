// `npm run bench:playback`: playback at scale (docs/playback-at-scale.md). GET of 1 MiB of a ready video's
// MP4 by Range, timed against the floor Worker (scripts/bench-floor) reading the same range of the
// same bytes from its own R2 (stored as the service stores an MP4: a multipart upload), both under
// `wrangler dev`, interleaved sample by sample. Three figures for the service:
// - a first viewer: each sample asks for a 1 MiB range nobody asked for before (its slice is not
//   in the location's cache: one R2 read, and the slice stored), the video's state remembered;
// - a cached answer: the same range again (no D1, no R2 read);
// - a first viewer whose video's state is not remembered either (`BENCH_COLD_STATE`, one D1
//   read more: each sample waits out the 5 s the state is kept, so few samples).
// Targets: the first viewer's median within 1.3x the floor's R2 read, the cached one no slower.
// BENCH_SAMPLES (default 40) per case; the MP4 is of a 1080p clip long enough for that many slices.
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import path from "node:path";
import { makeClip } from "../encoder/test/media.mjs";
import { mp4Key } from "../src/lib/storage-keys.ts";
import { keyedTenant } from "../test/e2e/client.ts";
import { binaries, uploadVideo, waitForStatus } from "../test/e2e/media.ts";
import { startDevServer } from "../test/e2e/server.ts";
import { startFloorWorker } from "./floor-worker.ts";

const MiB = 1024 * 1024;
/** The parts the service stores an MP4 in (MP4_PART_BYTES, src/encoding/pipeline/coordinator.ts). */
const MP4_PART_BYTES = 32 * MiB;
const SAMPLES = Number(process.env.BENCH_SAMPLES ?? 40);
const COLD_STATE_SAMPLES = Number(process.env.BENCH_COLD_STATE ?? 0);
const WARMUP = 5;
const median = (values: number[]) => [...values].sort((a, b) => a - b)[values.length >> 1] ?? Number.NaN;

/** One GET, its body read to the end: milliseconds, and the answer's `x-cache`. */
async function timed(url: string, headers: Record<string, string>, expect: number) {
  const started = performance.now();
  const response = await fetch(url, { headers });
  const body = await response.arrayBuffer();
  const ms = performance.now() - started;
  if (response.status !== expect) throw new Error(`${url}: ${response.status}`);
  return { ms, bytes: body.byteLength, cache: response.headers.get("x-cache") };
}

const [server, floor] = await Promise.all([startDevServer(), startFloorWorker()]);
const dir = mkdtempSync(path.join(tmpdir(), "bench-playback-"));
try {
  const base = server.baseUrl;
  const tenant = await keyedTenant(base, { name: "bench-playback" });
  const settings = await tenant.owner.request("PATCH", `/v1/projects/${tenant.projectId}/encoding-settings`, {
    body: { mp4FallbackEnabled: true },
  });
  if (settings.status !== 200) throw new Error(`settings: ${settings.status} ${settings.text}`);
  const seconds = Math.max(20, Math.ceil((SAMPLES + WARMUP + COLD_STATE_SAMPLES + 2) / 1.5));
  const source = await makeClip(binaries.ffmpeg, path.join(dir, "clip.mp4"), {
    width: 1920,
    height: 1080,
    seconds,
    rate: 30,
  });
  const { id } = await uploadVideo(tenant.call, new Uint8Array(source));
  const ready = await waitForStatus(tenant.call, id, ["ready"], 900);
  const mp4Url = ready.playback?.mp4;
  if (!mp4Url) throw new Error(`video ${id}: no MP4`);
  // The MP4's bytes straight from the service's local R2 (a GET would put every slice in the cache).
  const copy = path.join(dir, "video.mp4");
  const got = spawnSync(
    "wrangler",
    ["r2", "object", "get", `video-hosting-media/${mp4Key(tenant.projectId, id)}`, "--local"].concat([
      "--persist-to",
      server.persistTo,
      "--file",
      copy,
    ]),
    { encoding: "utf8", env: { ...process.env, CI: "true", WRANGLER_SEND_METRICS: "false" } },
  );
  if (got.status !== 0) throw new Error(`reading the MP4 from R2: ${got.stderr}`);
  const mp4 = new Uint8Array(readFileSync(copy));
  const slices = Math.floor(mp4.byteLength / MiB);
  // In parts of the size the service's MP4 is stored in (MP4_PART_BYTES).
  const seeded = await fetch(`${floor.base}/seed?key=mp4&multipart=${MP4_PART_BYTES}`, {
    method: "PUT",
    body: mp4,
    headers: { "content-type": "video/mp4" },
  });
  if (seeded.status !== 204) throw new Error(`floor seed: ${seeded.status}`);
  const fresh = Math.min(SAMPLES + WARMUP, slices - 1 - COLD_STATE_SAMPLES);
  console.log(
    `MP4 of a ${seconds} s 1080p clip: ${mp4.byteLength} bytes (${slices} whole MiB); ${fresh - WARMUP} first-viewer ` +
      `samples (one per slice nobody asked for), ${SAMPLES} cached; load average ${loadavg()[0]?.toFixed(2)}`,
  );

  const range = (n: number) => ({ range: `bytes=${n * MiB}-${(n + 1) * MiB - 1}` });
  const times = { first: [] as number[], cached: [] as number[], floor: [] as number[], cold: [] as number[] };
  const misses = { first: 0, cached: 0 };
  for (let i = 0; i < fresh; i++) {
    const first = await timed(mp4Url, range(i), 206);
    const cached = await timed(mp4Url, range(i), 206);
    const floorRead = await timed(`${floor.base}/object?key=mp4`, range(i), 206);
    if (first.bytes !== MiB || cached.bytes !== MiB || floorRead.bytes !== MiB) throw new Error("not 1 MiB");
    if (i < WARMUP) continue;
    times.first.push(first.ms);
    times.cached.push(cached.ms);
    times.floor.push(floorRead.ms);
    if (first.cache !== "MISS") misses.first++;
    if (cached.cache !== "HIT") misses.cached++;
  }
  // More cached and floor samples where the MP4 had fewer slices than SAMPLES.
  for (let i = fresh - WARMUP; i < SAMPLES; i++) {
    times.cached.push((await timed(mp4Url, range(i % fresh), 206)).ms);
    times.floor.push((await timed(`${floor.base}/object?key=mp4`, range(i % fresh), 206)).ms);
  }
  for (let i = 0; i < COLD_STATE_SAMPLES; i++) {
    await new Promise((resolve) => setTimeout(resolve, 5_100));
    times.cold.push((await timed(mp4Url, range(fresh + i), 206)).ms);
  }
  const floorMedian = median(times.floor);
  const line = (name: string, values: number[], target: string) =>
    console.log(
      `${name.padEnd(46)} ${median(values).toFixed(2).padStart(7)} ms  ${(median(values) / floorMedian).toFixed(2)}x the floor  (${target}, ${values.length} samples)`,
    );
  console.log(
    `${"floor: the same 1 MiB range from R2 (multipart)".padEnd(46)} ${floorMedian.toFixed(2).padStart(7)} ms`,
  );
  line("service, first viewer of the range (slice MISS)", times.first, "target <= 1.3x");
  line("service, cached (slice HIT, no D1, no R2)", times.cached, "target <= 1.0x");
  if (times.cold.length > 0) line("service, state not remembered either (D1+R2)", times.cold, "informative");
  if (misses.first + misses.cached > 0) {
    console.log(`x-cache not as expected: ${misses.first} first answers not MISS, ${misses.cached} repeats not HIT`);
  }
  console.log(
    `load average ${loadavg()
      .map((n) => n.toFixed(2))
      .join(" ")}`,
  );
} finally {
  rmSync(dir, { recursive: true, force: true });
  floor.stop();
  await server.stop();
}
