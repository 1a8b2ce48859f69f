// `npm run bench`: starts the real dev server and prints latency figures at concurrency 1.
// Figures, not pass/fail: targets are read by people, never asserted in tests.
import { spawnSync } from "node:child_process";
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { build } from "esbuild";
import { Client } from "../test/e2e/client.ts";
import { startDevServer } from "../test/e2e/server.ts";
import { paddedPng } from "../test/support/images.ts";

const SAMPLES = Number(process.env.BENCH_SAMPLES ?? 200);
const BULK_DELETE_SAMPLES = Number(process.env.BENCH_BULK_DELETE_SAMPLES ?? 30);
const DELIVERY_SAMPLES = Number(process.env.BENCH_DELIVERY_SAMPLES ?? 100);
/** Attempts seeded on one endpoint for the deliveries cases; 1% of them failed. */
const SEEDED_ATTEMPTS = 100_000;
const CURSOR_SECRET = "bench-cursor-secret-0123456789abcdef0123456789";
const WARMUP = 10;
/** Calls per caller, under every per-caller limit (30 a minute for bulk). */
const PER_CALLER = 25;

type Outcome = { status: number; headers: Headers; headersMs: number };
type Case = {
  name: string;
  expect: number;
  samples?: number;
  /** Work done before each sample, outside its timing. */
  prepare?: (i: number) => Promise<void>;
  run: (i: number) => Promise<Outcome>;
};

function percentile(sorted: number[], p: number): number {
  return sorted[Math.max(0, Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1))] ?? Number.NaN;
}

async function measure(item: Case) {
  const samples = item.samples ?? SAMPLES;
  const times: number[] = [];
  const worker: number[] = [];
  const toHeaders: number[] = [];
  for (let i = 0; i < WARMUP + samples; i++) {
    await item.prepare?.(i);
    const start = performance.now();
    const { status, headers, headersMs } = await item.run(i);
    const elapsed = performance.now() - start;
    if (status !== item.expect) throw new Error(`${item.name}: expected ${item.expect}, got ${status}`);
    if (i < WARMUP) continue;
    times.push(elapsed);
    toHeaders.push(headersMs);
    worker.push(Number(/app;dur=([\d.]+)/.exec(headers.get("server-timing") ?? "")?.[1] ?? Number.NaN));
  }
  times.sort((a, b) => a - b);
  worker.sort((a, b) => a - b);
  toHeaders.sort((a, b) => a - b);
  return {
    name: item.name,
    samples,
    median: percentile(times, 50),
    p95: percentile(times, 95),
    workerMedian: percentile(worker, 50),
    headersMedian: percentile(toHeaders, 50),
  };
}

async function inBatches<T>(count: number, size: number, task: (i: number) => Promise<T>): Promise<T[]> {
  const out: T[] = [];
  for (let start = 0; start < count; start += size) {
    out.push(...(await Promise.all(Array.from({ length: Math.min(size, count - start) }, (_, j) => task(start + j)))));
  }
  return out;
}

/** An approved owner with one project, and as many API keys as asked for. */
async function workspace(baseUrl: string, keys: number) {
  const owner = new Client(baseUrl);
  await owner.onboard();
  const project = await owner.request("POST", "/v1/projects", { body: { name: "bench" } });
  const callers = await inBatches(keys, 10, async () => {
    const created = await owner.request("POST", `/v1/projects/${project.json.id}/api-keys`, {
      body: { name: "bench", scopes: ["read", "write"], mode: "test" },
    });
    const client = new Client(baseUrl);
    const auth = { authorization: `Bearer ${created.json.key}` };
    return (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) =>
      client.request(method, path, { body, headers: { ...auth, ...headers } });
  });
  return { owner, callers };
}

/** The workerd processes of the dev server: where the Worker runs locally. */
function workerdPids(processGroup: number): number[] {
  return readdirSync("/proc")
    .filter((name) => /^\d+$/.test(name))
    .filter((pid) => {
      try {
        const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
        const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
        return Number(fields[2]) === processGroup && stat.includes("(workerd)");
      } catch {
        return false;
      }
    })
    .map(Number);
}

/** Peak resident memory (VmHWM) of the processes, in MiB; resettable through clear_refs. */
function peakMemory(pids: number[], reset = false): number {
  let total = 0;
  for (const pid of pids) {
    if (reset) writeFileSync(`/proc/${pid}/clear_refs`, "5");
    const match = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
    total += Number(match?.[1] ?? 0) / 1024;
  }
  return total;
}

/**
 * Seeds `SEEDED_ATTEMPTS` attempts of one event on the endpoint straight into the server's local
 * D1 (the same state directory), created one second apart; every hundredth one failed. Row n
 * (1-based, oldest first) has id `01BENCH` + n and createdAt base + n seconds.
 */
function seedAttempts(persistTo: string, endpointId: string, projectId: string) {
  const sql = `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ${SEEDED_ATTEMPTS})
    INSERT INTO webhook_deliveries (id, endpoint_id, event_id, event_type, state, attempt, response_status,
      duration_ms, created_at, completed_at, due_at)
    SELECT printf('01BENCH%019d', i), '${endpointId}',
      (SELECT id FROM outbox_events WHERE project_id = '${projectId}' LIMIT 1), 'video.deleted',
      CASE WHEN i % 100 = 0 THEN 'failed' ELSE 'succeeded' END, i,
      CASE WHEN i % 100 = 0 THEN 500 ELSE 200 END, 12,
      strftime('%Y-%m-%dT%H:%M:%fZ', '2026-01-01', '+' || i || ' seconds'),
      strftime('%Y-%m-%dT%H:%M:%fZ', '2026-01-01', '+' || i || ' seconds'),
      strftime('%Y-%m-%dT%H:%M:%fZ', '2026-01-01', '+' || i || ' seconds')
    FROM n`;
  const result = spawnSync(
    "wrangler",
    ["d1", "execute", "DB", "--local", "--persist-to", persistTo, "--command", sql.replace(/\s+/g, " ")],
    { encoding: "utf8", env: { ...process.env, CI: "true", WRANGLER_SEND_METRICS: "false" } },
  );
  if (result.status !== 0) throw new Error(`seeding failed:\n${result.stdout}\n${result.stderr}`);
}

/** The seeded attempt n rows from the oldest, as a listing position. */
function seededPosition(n: number) {
  return {
    createdAt: new Date(Date.parse("2026-01-01T00:00:00.000Z") + n * 1000).toISOString(),
    id: `01BENCH${String(n).padStart(19, "0")}`,
  };
}

// Declared here rather than imported: the Worker's sources type-check against the Workers runtime.
type CursorCode = {
  encodeCursor(secret: string, scope: string, position: { createdAt: string; id: string }): Promise<string>;
  deliveriesCursorScope(endpointId: string, filter: { state?: string }): string;
};

/**
 * The project's own cursor signing, bundled with esbuild as wrangler bundles the Worker (Node's
 * type stripping cannot resolve the Worker's extensionless imports), so the bench signs cursors
 * exactly as the service does instead of walking 500 pages to reach one.
 */
async function loadCursorCode(): Promise<CursorCode> {
  const bundled = await build({
    stdin: {
      contents:
        'export { encodeCursor } from "./src/lib/cursor"; export { deliveriesCursorScope } from "./src/webhooks/model";',
      resolveDir: path.join(import.meta.dirname, ".."),
      loader: "ts",
    },
    bundle: true,
    format: "esm",
    platform: "neutral",
    write: false,
  });
  const code = bundled.outputFiles[0]?.text ?? "";
  return import(`data:text/javascript;base64,${Buffer.from(code).toString("base64")}`);
}
const { encodeCursor, deliveriesCursorScope } = await loadCursorCode();

const server = await startDevServer(["--var", `CURSOR_SECRET:${CURSOR_SECRET}`]);
try {
  const base = server.baseUrl;
  const callersFor = (samples: number) => Math.ceil((samples + WARMUP) / PER_CALLER);
  const creators = await inBatches(callersFor(SAMPLES), 5, async () => {
    const client = new Client(base);
    await client.onboard();
    return client;
  });
  const reader = creators[0] as Client;
  // Each creator also edits its own project's settings: PATCH is limited to 60 a minute per session.
  const settingsPaths = await Promise.all(
    creators.map(async (client) => {
      const project = await client.request("POST", "/v1/projects", { body: { name: "settings" } });
      return `/v1/projects/${project.json.id}/encoding-settings`;
    }),
  );
  const ws = await workspace(base, callersFor(SAMPLES) + callersFor(BULK_DELETE_SAMPLES) + 1);
  const caller = (i: number, offset = 0) =>
    ws.callers[offset + Math.floor(i / PER_CALLER)] as (typeof ws.callers)[number];
  const api = ws.callers[ws.callers.length - 1] as (typeof ws.callers)[number];
  const newVideos = (n: number) =>
    inBatches(n, 20, async () => (await api("POST", "/v1/videos", {})).json.video.id as string);
  const visibilityIds = await newVideos(100);
  const png = new Uint8Array(readFileSync(path.join(import.meta.dirname, "../test/fixtures/images/rgb.png")));
  const thumbnails = { small: paddedPng(png, 200 * 1024), large: paddedPng(png, 5 * 1024 * 1024) };
  const thumbnailCallers = await workspace(base, 2 * callersFor(SAMPLES));
  const thumbnailOwner = thumbnailCallers.callers[0] as (typeof ws.callers)[number];
  const thumbnailVideo = (await thumbnailOwner("POST", "/v1/videos", {})).json.video.id as string;
  let publicUrl = "";
  // Each upload replaces the last; the public GET case reads the latest one.
  const putThumbnail = async (i: number, offset: number, bytes: Uint8Array) => {
    const caller = thumbnailCallers.callers[offset + Math.floor(i / PER_CALLER)] as (typeof ws.callers)[number];
    const response = await caller("PUT", `/v1/videos/${thumbnailVideo}/thumbnail`, bytes, {
      "content-type": "image/png",
    });
    publicUrl = response.json?.thumbnailUrl ?? publicUrl;
    return response;
  };
  let deleteIds: string[] = [];

  const cases: Case[] = [
    { name: "unknown route (baseline)", expect: 404, run: () => reader.request("GET", "/v1/no-such-route") },
    { name: "GET /v1/account", expect: 200, run: () => reader.request("GET", "/v1/account") },
    {
      name: "POST /v1/projects",
      expect: 201,
      run: (i) =>
        (creators[Math.floor(i / PER_CALLER)] as Client).request("POST", "/v1/projects", { body: { name: `b${i}` } }),
    },
    {
      name: "PATCH encoding-settings",
      expect: 200,
      run: (i) =>
        (creators[Math.floor(i / PER_CALLER)] as Client).request(
          "PATCH",
          settingsPaths[Math.floor(i / PER_CALLER)] ?? "",
          {
            body: { mp4FallbackEnabled: i % 2 === 0, watermark: { opacity: (i % 10) / 10 } },
          },
        ),
    },
    { name: "GET /v1/videos/{id}", expect: 200, run: () => api("GET", `/v1/videos/${visibilityIds[0]}`) },
    {
      name: "bulk set_visibility x100",
      expect: 200,
      run: (i) =>
        caller(i)("POST", "/v1/videos/bulk", {
          action: "set_visibility",
          videoIds: visibilityIds,
          visibility: i % 2 ? "public" : "private",
        }),
    },
    {
      name: "bulk delete x100",
      expect: 200,
      samples: BULK_DELETE_SAMPLES,
      prepare: async () => {
        deleteIds = await newVideos(100);
      },
      run: (i) => caller(i, callersFor(SAMPLES))("POST", "/v1/videos/bulk", { action: "delete", videoIds: deleteIds }),
    },
  ];

  cases.push(
    {
      name: "PUT thumbnail 200 KB",
      expect: 200,
      run: (i) => putThumbnail(i, 0, thumbnails.small),
    },
    { name: "PUT thumbnail 5 MiB", expect: 200, run: (i) => putThumbnail(i, callersFor(SAMPLES), thumbnails.large) },
    {
      name: "GET public thumbnail",
      expect: 200,
      run: async () => {
        const started = performance.now();
        const response = await fetch(publicUrl);
        const headersMs = performance.now() - started;
        await response.arrayBuffer();
        return { status: response.status, headers: response.headers, headersMs };
      },
    },
  );

  // Deliveries: one endpoint holding SEEDED_ATTEMPTS attempts; pages at the top and 50,000 deep.
  const hooks = await workspace(base, 3 * Math.ceil((DELIVERY_SAMPLES + WARMUP) / PER_CALLER));
  const hooksProject = (await hooks.owner.request("GET", "/v1/projects")).json.data[0].id as string;
  const hookVideo = (await (hooks.callers[0] as (typeof ws.callers)[number])("POST", "/v1/videos", {})).json.video.id;
  // The video's event is deleted before the endpoint exists, so no real delivery is attempted.
  await (hooks.callers[0] as (typeof ws.callers)[number])("DELETE", `/v1/videos/${hookVideo}`);
  const hookEndpoint = (
    await hooks.owner.request("POST", `/v1/projects/${hooksProject}/webhook-endpoints`, {
      body: { url: "https://hooks.example.com/bench" },
    })
  ).json.id as string;
  const seedStarted = performance.now();
  seedAttempts(server.persistTo, hookEndpoint, hooksProject);
  console.log(`seeded ${SEEDED_ATTEMPTS} attempts in ${((performance.now() - seedStarted) / 1000).toFixed(1)} s`);
  const deliveriesPath = `/v1/projects/${hooksProject}/webhook-endpoints/${hookEndpoint}/deliveries`;
  const deep = SEEDED_ATTEMPTS / 2;
  const deepCursor = await encodeCursor(CURSOR_SECRET, deliveriesCursorScope(hookEndpoint, {}), seededPosition(deep));
  const failedCursor = await encodeCursor(
    CURSOR_SECRET,
    deliveriesCursorScope(hookEndpoint, { state: "failed" }),
    seededPosition(deep),
  );
  // The signed positions must land where the seed says: the page after row `deep` starts at row deep - 1.
  const check = await (hooks.callers[0] as (typeof ws.callers)[number])(
    "GET",
    `${deliveriesPath}?limit=100&state=failed&cursor=${failedCursor}`,
  );
  if (check.json?.data?.[0]?.attempt !== deep - 100 || check.json.data.length !== 100) {
    throw new Error(`deliveries seed: unexpected deep page ${check.status} ${check.text.slice(0, 200)}`);
  }
  const hookCaller = (i: number, offset: number) =>
    hooks.callers[
      offset * Math.ceil((DELIVERY_SAMPLES + WARMUP) / PER_CALLER) + Math.floor(i / PER_CALLER)
    ] as (typeof ws.callers)[number];
  cases.push(
    {
      name: "deliveries page, top",
      expect: 200,
      samples: DELIVERY_SAMPLES,
      run: (i) => hookCaller(i, 0)("GET", `${deliveriesPath}?limit=100`),
    },
    {
      name: `deliveries page, ${deep} deep`,
      expect: 200,
      samples: DELIVERY_SAMPLES,
      run: (i) => hookCaller(i, 1)("GET", `${deliveriesPath}?limit=100&cursor=${deepCursor}`),
    },
    {
      name: "deliveries failed, deep",
      expect: 200,
      samples: DELIVERY_SAMPLES,
      run: (i) => hookCaller(i, 2)("GET", `${deliveriesPath}?limit=100&state=failed&cursor=${failedCursor}`),
    },
  );

  const results = [];
  const workerd = workerdPids(server.processGroup);
  let thumbnailPeak = Number.NaN;
  let basePeak = Number.NaN;
  // BENCH_ONLY=text runs only the cases whose name contains it (the baseline always runs).
  const only = process.env.BENCH_ONLY;
  for (const item of cases.filter((c, i) => i === 0 || !only || c.name.includes(only))) {
    if (item.name === "PUT thumbnail 200 KB") basePeak = peakMemory(workerd, true);
    results.push(await measure(item));
    if (item.name === "GET public thumbnail") thumbnailPeak = peakMemory(workerd);
  }
  const baseline = results[0]?.median ?? Number.NaN;
  const single = results.find((r) => r.name === "GET /v1/videos/{id}")?.median ?? Number.NaN;
  console.log(`concurrency 1, ${WARMUP} warm-up calls per case; latency measured by the client over loopback;`);
  console.log("headers ms: median time to the response headers; local wrangler dev ends the body only after");
  console.log("  the request's waitUntil work (R2 aborts after a delete), which production does not wait for");
  console.log("worker ms: the Worker's own time from its Server-Timing header (waitUntil work excluded)");
  console.log(
    "case".padEnd(26),
    "samples".padStart(8),
    "median ms".padStart(10),
    "p95 ms".padStart(9),
    "x baseline".padStart(11),
    "x GET video".padStart(12),
    "headers ms".padStart(11),
    "worker ms".padStart(10),
  );
  for (const r of results) {
    console.log(
      r.name.padEnd(26),
      String(r.samples).padStart(8),
      r.median.toFixed(2).padStart(10),
      r.p95.toFixed(2).padStart(9),
      (r.median / baseline).toFixed(2).padStart(11),
      (r.median / single).toFixed(2).padStart(12),
      r.headersMedian.toFixed(2).padStart(11),
      r.workerMedian.toFixed(1).padStart(10),
    );
  }
  const top = results.find((r) => r.name === "deliveries page, top")?.median ?? Number.NaN;
  for (const r of results.filter((r) => r.name.startsWith("deliveries"))) {
    console.log(`${r.name}: ${(r.median / top).toFixed(2)}x the first page`);
  }
  console.log(
    `workerd peak RSS (VmHWM, ${workerd.length} process): ${basePeak.toFixed(1)} MiB before the thumbnail cases, ` +
      `${thumbnailPeak.toFixed(1)} MiB at their peak`,
  );
} finally {
  await server.stop();
}
