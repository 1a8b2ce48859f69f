// `npm run bench:floor`: how far the Worker's own required work sits above a bare answer under
// `wrangler dev`. Starts scripts/bench-floor (a Worker that does only what some routes cannot do
// without: for PUT thumbnail and PATCH encoding settings, authenticate in D1, count in the service's
// RateLimiter, receive the body, store, swap, delete; for playback, read the file from R2) and times
// each beside its bare 404, as `npm run bench` does. The service's own route cannot be faster than
// its bare route plus this difference. (`npm run bench` compares its playback routes with the same
// floor reading the very bytes it served.)
import { readFileSync } from "node:fs";
import path from "node:path";
import { pseudoRandom } from "../encoder/test/media.mjs";
import { paddedPng } from "../test/support/images.ts";
import { startFloorWorker } from "./floor-worker.ts";

const SAMPLES = Number(process.env.BENCH_SAMPLES ?? 200);
const WARMUP = 20;
const root = path.join(import.meta.dirname, "..");
const floor = await startFloorWorker(process.env.BENCH_FLOOR_PORT ? Number(process.env.BENCH_FLOOR_PORT) : undefined);

const median = (values: number[]) => [...values].sort((a, b) => a - b)[values.length >> 1] ?? Number.NaN;

/** Times `pathname`, and the bare 404 right before each call. */
async function paired(pathname: string, init: () => RequestInit) {
  const bare: number[] = [];
  const times: number[] = [];
  for (let i = 0; i < WARMUP + SAMPLES; i++) {
    const b = await floor.call("/bare");
    const t = await floor.call(pathname, init());
    if (i >= WARMUP) {
      bare.push(b);
      times.push(t);
    }
  }
  return { bare: median(bare), median: median(times) };
}

try {
  // The objects of the playback floor: a playlist-sized one and a 1 MiB one (a segment).
  // Their types are the service's: the local runtime compresses some types for a client that
  // accepts gzip (Node's fetch does), which costs far more than the read. The segment's bytes are
  // as incompressible as video (pseudo-random), as its gzip would otherwise be nearly free.
  await floor.seed("playlist", new Uint8Array(400).fill(0x23), "application/vnd.apple.mpegurl");
  await floor.seed("segment", new Uint8Array(pseudoRandom(1024 * 1024)), "video/mp2t");
  const png = new Uint8Array(readFileSync(path.join(root, "test/fixtures/images/rgb.png")));
  const small = new Uint8Array(paddedPng(png, 200 * 1024));
  const cases = [
    [
      "PUT thumbnail 200 KB: D1, DO, body, R2 put, D1 batch, R2 delete",
      "/thumbnail",
      () => ({ method: "PUT", body: small }),
    ],
    [
      "PATCH encoding settings: D1, DO, body, D1",
      "/patch",
      () => ({ method: "PATCH", body: '{"mp4FallbackEnabled":true}' }),
    ],
    ["GET playlist, 400 B: R2 get", "/object?key=playlist", () => ({})],
    ["GET segment, 1 MiB: R2 get", "/object?key=segment", () => ({})],
    ["GET segment, 1 MiB: D1, R2 get", "/object?key=segment&d1=1", () => ({})],
  ] as const;
  console.log(
    `concurrency 1, ${SAMPLES} samples after ${WARMUP} warm-up calls, each beside a bare 404 of the same Worker`,
  );
  console.log(`${"required work only".padEnd(66)} median  bare 404  above bare  x bare`);
  for (const [name, pathname, init] of cases) {
    const result = await paired(pathname, init);
    console.log(
      name.padEnd(66),
      result.median.toFixed(2).padStart(6),
      result.bare.toFixed(2).padStart(9),
      (result.median - result.bare).toFixed(2).padStart(11),
      (result.median / result.bare).toFixed(2).padStart(7),
    );
  }
  // D1 write statements per second, inside the Worker (docs/scaling.md).
  for (const mode of ["single", "batch"] as const) {
    const runs: number[] = [];
    for (let i = 0; i < 5; i++) {
      const response = await fetch(`${floor.base}/writes?n=1000&mode=${mode}`);
      const { n, ms } = (await response.json()) as { n: number; ms: number };
      runs.push((n / ms) * 1000);
    }
    runs.sort((a, b) => a - b);
    console.log(
      `D1 writes, 1000 single-row inserts ${mode === "batch" ? "in one batch" : "one round trip each"}: ` +
        `median ${Math.round(runs[2] ?? 0)} statements/s (5 runs: ${runs.map(Math.round).join(", ")})`,
    );
  }
} finally {
  floor.stop();
}
