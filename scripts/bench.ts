// `npm run bench`: starts the real dev server and prints latency figures at concurrency 1.
// Figures, not pass/fail: targets are read by people, never asserted in tests.
import { Client } from "../test/e2e/client.ts";
import { startDevServer } from "../test/e2e/server.ts";

const SAMPLES = Number(process.env.BENCH_SAMPLES ?? 200);
const WARMUP = 20;

type Case = { name: string; run: (i: number) => Promise<{ status: number }>; expect: number };

function percentile(sorted: number[], p: number): number {
  const index = Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1);
  return sorted[Math.max(0, index)] ?? Number.NaN;
}

async function measure(item: Case): Promise<{ median: number; p95: number }> {
  for (let i = 0; i < WARMUP; i++) await item.run(i);
  const times: number[] = [];
  for (let i = 0; i < SAMPLES; i++) {
    const start = performance.now();
    const { status } = await item.run(WARMUP + i);
    times.push(performance.now() - start);
    if (status !== item.expect) throw new Error(`${item.name}: expected ${item.expect}, got ${status}`);
  }
  times.sort((a, b) => a - b);
  return { median: percentile(times, 50), p95: percentile(times, 95) };
}

/** Clients enough that no rate limit is reached: each one stays under `perClient` calls. */
async function clients(baseUrl: string, calls: number, perClient: number): Promise<Client[]> {
  const list: Client[] = [];
  for (let i = 0; i < Math.ceil(calls / perClient); i++) {
    const client = new Client(baseUrl);
    await client.onboard();
    list.push(client);
  }
  return list;
}

const server = await startDevServer();
try {
  const base = server.baseUrl;
  const [reader] = await clients(base, 1, 1);
  if (!reader) throw new Error("no client");
  const creators = await clients(base, SAMPLES + WARMUP, 55);
  const cases: Case[] = [
    { name: "unknown route (baseline)", expect: 404, run: () => reader.request("GET", "/v1/no-such-route") },
    { name: "GET /v1/account", expect: 200, run: () => reader.request("GET", "/v1/account") },
    {
      name: "POST /v1/projects",
      expect: 201,
      run: (i) =>
        (creators[Math.floor(i / 55)] as Client).request("POST", "/v1/projects", { body: { name: `bench ${i}` } }),
    },
  ];
  const results = [];
  for (const item of cases) results.push({ name: item.name, ...(await measure(item)) });
  const baseline = results[0]?.median ?? Number.NaN;
  console.log(`samples per case: ${SAMPLES} (after ${WARMUP} warm-up), concurrency 1`);
  console.log("case".padEnd(28), "median ms".padStart(10), "p95 ms".padStart(10), "x baseline".padStart(11));
  for (const r of results) {
    console.log(
      r.name.padEnd(28),
      r.median.toFixed(2).padStart(10),
      r.p95.toFixed(2).padStart(10),
      (r.median / baseline).toFixed(2).padStart(11),
    );
  }
} finally {
  await server.stop();
}
