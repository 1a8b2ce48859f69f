// `npm run bench:floor`: how far the Worker's own required work sits above a bare answer under
// `wrangler dev`. Starts scripts/bench-floor (a Worker that does only what PUT thumbnail and PATCH
// encoding settings cannot do without: authenticate in D1, count in the service's RateLimiter,
// receive the body, store, swap, delete) and times each beside its bare 404, as `npm run bench`
// does. The service's own route cannot be faster than its bare route plus this difference.
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { paddedPng } from "../test/support/images.ts";

const SAMPLES = Number(process.env.BENCH_SAMPLES ?? 200);
const WARMUP = 20;
const PORT = Number(process.env.BENCH_FLOOR_PORT ?? 8797);
const base = `http://127.0.0.1:${PORT}`;
const root = path.join(import.meta.dirname, "..");
const persistTo = mkdtempSync(path.join(tmpdir(), "bench-floor-"));

const server = spawn(
  "wrangler",
  [
    "dev",
    "-c",
    "scripts/bench-floor/wrangler.toml",
    "--ip",
    "127.0.0.1",
    "--port",
    String(PORT),
    "--persist-to",
    persistTo,
  ],
  { cwd: root, detached: true, stdio: "ignore", env: { ...process.env, CI: "true", WRANGLER_SEND_METRICS: "false" } },
);

async function call(pathname: string, init?: RequestInit): Promise<number> {
  const start = performance.now();
  const response = await fetch(`${base}${pathname}`, init);
  await response.arrayBuffer();
  return performance.now() - start;
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[values.length >> 1] ?? Number.NaN;

/** Times `pathname`, and the bare 404 right before each call. */
async function paired(pathname: string, init: () => RequestInit) {
  const bare: number[] = [];
  const times: number[] = [];
  for (let i = 0; i < WARMUP + SAMPLES; i++) {
    const b = await call("/bare");
    const t = await call(pathname, init());
    if (i >= WARMUP) {
      bare.push(b);
      times.push(t);
    }
  }
  return { bare: median(bare), median: median(times) };
}

try {
  for (let ready = false, tries = 0; !ready; tries++) {
    if (tries > 120) throw new Error("the floor Worker did not start");
    ready = await call("/setup").then(
      () => true,
      () => new Promise((resolve) => setTimeout(() => resolve(false), 500)),
    );
  }
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
  // D1 write statements per second, inside the Worker (README, "Scaling").
  for (const mode of ["single", "batch"] as const) {
    const runs: number[] = [];
    for (let i = 0; i < 5; i++) {
      const response = await fetch(`${base}/writes?n=1000&mode=${mode}`);
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
  if (server.pid) process.kill(-server.pid, "SIGTERM");
  rmSync(persistTo, { recursive: true, force: true });
}
