// `npm run bench`: starts the real dev server and times every route at concurrency 1, printing one
// table (median, p95, ratio to the bare route, round trips by kind) and writing it as JSON to
// .bench/results.json. Figures, not pass/fail: targets are read by people, never asserted in tests.
// Before the routes, the encoding pipeline against ffmpeg run directly (scripts/bench-encoding.ts)
// and what a viewer sees of a 5-minute video (scripts/bench-viewer.ts); after them, the playback
// routes against the bench floor Worker. BENCH_ONLY=regex runs only the cases and sections whose
// name matches it: "encoding pipeline", "viewer", "playback floor" (also run by any playback
// case), "webhook isolation" (the bare route always runs).
import { spawnSync } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { build } from "esbuild";
import { Client } from "../test/e2e/client.ts";
import { E2E_ADMIN_TOKEN, startDevServer } from "../test/e2e/server.ts";
import { type BudgetedRoute, ROUND_TRIP_BUDGET } from "../test/round-trip-budget.ts";
import { paddedPng } from "../test/support/images.ts";
import { startBackgroundLoad } from "./bench-background.ts";
import { benchFrames, benchPipeline, comparePlaybackWithFloor, preparePlayback } from "./bench-encoding.ts";
import { benchViewer } from "./bench-viewer.ts";
import { benchWebhookIsolation } from "./bench-webhooks.ts";
import { percentile } from "./percentile.ts";
import { workerdPids } from "./proc.ts";

const SAMPLES = Number(process.env.BENCH_SAMPLES ?? 100);
const BULK_DELETE_SAMPLES = Number(process.env.BENCH_BULK_DELETE_SAMPLES ?? 30);
const DELIVERY_SAMPLES = Number(process.env.BENCH_DELIVERY_SAMPLES ?? 100);
/** Samples per case in the pass under background load (0 skips it). */
const LOADED_SAMPLES = Number(process.env.BENCH_LOADED_SAMPLES ?? 40);
/** Attempts seeded on one endpoint for the deliveries cases; 1% of them failed. */
const SEEDED_ATTEMPTS = 100_000;
const CURSOR_SECRET = "bench-cursor-secret-0123456789abcdef0123456789";
/** The seeded attempts end an hour ago: young enough that the retention sweep leaves them alone. */
const SEED_BASE = new Date(Math.floor((Date.now() - (SEEDED_ATTEMPTS + 3600) * 1000) / 1000) * 1000).toISOString();
const WARMUP = 10;
/** Calls per caller, under every per-caller limit (30 a minute for bulk). */
const PER_CALLER = 25;

type Outcome = { status: number; headers: Headers; headersMs: number; text?: string };
type Case = {
  name: string;
  /** The route's entry in the round-trip budget, when the case is one route's success path. */
  budget?: BudgetedRoute;
  expect: number;
  samples?: number;
  /** Work done before each sample, outside its timing. */
  prepare?: (i: number) => Promise<void>;
  run: (i: number) => Promise<Outcome>;
};

/**
 * Times `item`, and the bare route right before each of its calls: each case's ratio is to the
 * bare calls made beside it, so that the machine's drift over a run (often ±1 ms, a sixth of the
 * bare route) does not move the ratios.
 */
async function measure(item: Case, bare: Case) {
  const samples = item.samples ?? SAMPLES;
  const times: number[] = [];
  const bareTimes: number[] = [];
  const worker: number[] = [];
  const toHeaders: number[] = [];
  for (let i = 0; i < WARMUP + samples; i++) {
    await item.prepare?.(i);
    const bareStart = performance.now();
    await bare.run(i);
    const bareElapsed = performance.now() - bareStart;
    const start = performance.now();
    const { status, headers, headersMs, text } = await item.run(i);
    const elapsed = performance.now() - start;
    if (status !== item.expect) {
      throw new Error(`${item.name}: expected ${item.expect}, got ${status} ${text?.slice(0, 300) ?? ""}`);
    }
    if (i < WARMUP) continue;
    bareTimes.push(bareElapsed);
    times.push(elapsed);
    toHeaders.push(headersMs);
    worker.push(Number(/app;dur=([\d.]+)/.exec(headers.get("server-timing") ?? "")?.[1] ?? Number.NaN));
  }
  times.sort((a, b) => a - b);
  bareTimes.sort((a, b) => a - b);
  worker.sort((a, b) => a - b);
  toHeaders.sort((a, b) => a - b);
  return {
    name: item.name,
    samples,
    median: percentile(times, 50),
    bareMedian: percentile(bareTimes, 50),
    p95: percentile(times, 95),
    p99: percentile(times, 99),
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

type Call = (
  method: string,
  path: string,
  body?: unknown,
  headers?: Record<string, string>,
) => ReturnType<Client["request"]>;

/**
 * An approved owner with one project and enough API keys that `caller(i)` changes key every
 * PER_CALLER calls, under every per-caller limit (the project's own bucket holds ten times more).
 */
async function workspace(baseUrl: string, calls = SAMPLES + WARMUP) {
  const owner = new Client(baseUrl);
  await owner.onboard();
  const project = await owner.request("POST", "/v1/projects", { body: { name: "bench" } });
  const projectId = project.json.id as string;
  const callers = await inBatches(Math.ceil(calls / PER_CALLER), 10, async () => {
    const created = await owner.request("POST", `/v1/projects/${projectId}/api-keys`, {
      body: { name: "bench", scopes: ["read", "write"], mode: "test" },
    });
    const client = new Client(baseUrl);
    const auth = { authorization: `Bearer ${created.json.key}` };
    const call: Call = (method, path, body, headers = {}) =>
      client.request(method, path, { body, headers: { ...auth, ...headers } });
    return call;
  });
  const caller = (i: number) => callers[Math.floor(i / PER_CALLER) % callers.length] as Call;
  return { owner, projectId, caller };
}

/** Owners of a project each, so that `owner(i)` changes session every PER_CALLER calls. */
async function owners(baseUrl: string, calls = SAMPLES + WARMUP) {
  const list = await inBatches(Math.ceil(calls / PER_CALLER), 5, async () => {
    const client = new Client(baseUrl);
    await client.onboard();
    const project = await client.request("POST", "/v1/projects", { body: { name: "bench" } });
    return { client, projectId: project.json.id as string };
  });
  return (i: number) => list[Math.floor(i / PER_CALLER) % list.length] as (typeof list)[number];
}

/** A client address of its own per call, for the per-address limits of signup and login. */
const address = (i: number) => ({ "cf-connecting-ip": `10.77.${Math.floor(i / 250)}.${i % 250}` });

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
 * (1-based, oldest first) has id `01BENCH` + n, createdAt base + n seconds and attempt number n + 1
 * (the event's real first attempt, if its publication raced the endpoint's creation, is number 1).
 */
function seedAttempts(persistTo: string, endpointId: string, projectId: string) {
  const sql = `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ${SEEDED_ATTEMPTS})
    INSERT INTO webhook_deliveries (id, endpoint_id, event_id, event_type, state, attempt, response_status,
      duration_ms, created_at, completed_at, due_at)
    SELECT printf('01BENCH%019d', i), '${endpointId}',
      (SELECT id FROM outbox_events WHERE project_id = '${projectId}' LIMIT 1), 'video.deleted',
      CASE WHEN i % 100 = 0 THEN 'failed' ELSE 'succeeded' END, i + 1,
      CASE WHEN i % 100 = 0 THEN 500 ELSE 200 END, 12,
      strftime('%Y-%m-%dT%H:%M:%fZ', '${SEED_BASE}', '+' || i || ' seconds'),
      strftime('%Y-%m-%dT%H:%M:%fZ', '${SEED_BASE}', '+' || i || ' seconds'),
      strftime('%Y-%m-%dT%H:%M:%fZ', '${SEED_BASE}', '+' || i || ' seconds')
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
    createdAt: new Date(Date.parse(SEED_BASE) + n * 1000).toISOString(),
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
    // "neutral" reads no package's main field unless told: @hono/zod-openapi's dependency has only `main`.
    mainFields: ["module", "main"],
    write: false,
  });
  const code = bundled.outputFiles[0]?.text ?? "";
  return import(`data:text/javascript;base64,${Buffer.from(code).toString("base64")}`);
}
const { encodeCursor, deliveriesCursorScope } = await loadCursorCode();

const only = process.env.BENCH_ONLY;
const selected = (name: string) => !only || new RegExp(only).test(name);

const server = await startDevServer(["--var", `CURSOR_SECRET:${CURSOR_SECRET}`]);
try {
  const base = server.baseUrl;
  // First, while nothing else runs on the dev server: the encoder has the machine to itself.
  const pipeline = selected("encoding pipeline") ? await benchPipeline(server) : null;
  const viewer = selected("viewer") ? await benchViewer(server) : null;
  const png = new Uint8Array(readFileSync(path.join(import.meta.dirname, "../test/fixtures/images/rgb.png")));
  const thumbnails = { small: paddedPng(png, 200 * 1024), large: paddedPng(png, 5 * 1024 * 1024) };
  const ws = await workspace(base, 3 * (SAMPLES + WARMUP));
  const api = ws.caller(0);
  const newVideo = async () => (await api("POST", "/v1/videos", {})).json.video.id as string;
  const newVideos = (n: number) => inBatches(n, 20, newVideo);
  const session = await owners(base);
  const patchers = await owners(base);
  const video = await newVideo();
  const hundred = await newVideos(100);
  // Endpoints live in a project of their own: one in the videos' project would get an attempt for
  // every video the other cases delete, and deliver it in the background while they are timed.
  const hooksWs = await workspace(base);
  const hooks = `/v1/projects/${hooksWs.projectId}/webhook-endpoints`;
  const endpoint = (await hooksWs.caller(0)("POST", hooks, { url: "https://hooks.example.com/bench" })).json
    .id as string;
  const keysPath = `/v1/projects/${ws.projectId}/api-keys`;
  const settingsOf = (projectId: string) => `/v1/projects/${projectId}/encoding-settings`;
  const login = { email: `bench-login-${Date.now()}@example.com`, password: "bench password 123" };
  const loginAccount = await new Client(base).request("POST", "/v1/auth/signup", {
    body: login,
    headers: address(9999),
  });
  const thumbnailWs = await workspace(base, 2 * (SAMPLES + WARMUP));
  // One video per thumbnail size, so the public GET case keeps serving the last 200 KB image.
  const thumbnailVideos = {
    small: (await thumbnailWs.caller(0)("POST", "/v1/videos", {})).json.video.id as string,
    large: (await thumbnailWs.caller(0)("POST", "/v1/videos", {})).json.video.id as string,
  };
  let publicUrl = "";
  const putThumbnail = async (call: Call, size: "small" | "large") => {
    const response = await call("PUT", `/v1/videos/${thumbnailVideos[size]}/thumbnail`, thumbnails[size], {
      "content-type": "image/png",
    });
    if (size === "small") publicUrl = response.json?.thumbnailUrl ?? publicUrl;
    return response;
  };
  // Playback: ready videos made on first use (encoding takes seconds), outside every timing.
  let playbackState: ReturnType<typeof preparePlayback> | null = null;
  const playback = () => {
    playbackState ??= preparePlayback(server, pipeline?.playbackVideo);
    return playbackState;
  };
  let played = { id: "", duration: 0, segment: { path: "", bytes: 0 }, tokenHls: "", mp4Url: "" };
  const usePlayback = async () => {
    played = await playback();
  };
  const getPlayback =
    (url: () => string, headers: Record<string, string> = {}) =>
    async () => {
      const started = performance.now();
      const response = await fetch(url(), { headers });
      const headersMs = performance.now() - started;
      await response.arrayBuffer();
      return { status: response.status, headers: response.headers, headersMs };
    };
  // Per-sample state made in `prepare`, outside the timing.
  let scratch = "";
  let logoutClient = new Client(base);
  let deleteIds: string[] = [];
  const uploaded = { video: "", etag: "" };

  const cases: Case[] = [
    { name: "unknown route (bare)", expect: 404, run: () => api("GET", "/v1/no-such-route") },
    {
      name: "POST /v1/auth/signup",
      budget: "POST /v1/auth/signup",
      expect: 201,
      run: (i) =>
        new Client(base).request("POST", "/v1/auth/signup", {
          body: { email: `bench-${Date.now()}-${i}@example.com`, password: "bench password 123" },
          headers: address(i),
        }),
    },
    {
      name: "POST /v1/auth/login",
      budget: "POST /v1/auth/login",
      expect: 200,
      run: (i) => new Client(base).request("POST", "/v1/auth/login", { body: login, headers: address(1000 + i) }),
    },
    {
      name: "POST /v1/auth/logout",
      budget: "POST /v1/auth/logout",
      expect: 204,
      prepare: async (i) => {
        logoutClient = new Client(base);
        await logoutClient.request("POST", "/v1/auth/login", { body: login, headers: address(2000 + i) });
      },
      run: () => logoutClient.request("POST", "/v1/auth/logout"),
    },
    {
      name: "GET /v1/account",
      budget: "GET /v1/account",
      expect: 200,
      run: (i) => session(i).client.request("GET", "/v1/account"),
    },
    ...(["approve", "suspend"] as const).map(
      (action): Case => ({
        name: `POST /v1/admin/accounts/{accountId}/${action}`,
        budget: `POST /v1/admin/accounts/{accountId}/${action}`,
        expect: 200,
        run: () =>
          new Client(base).request("POST", `/v1/admin/accounts/${loginAccount.json.id}/${action}`, {
            headers: { authorization: `Bearer ${E2E_ADMIN_TOKEN}` },
          }),
      }),
    ),
    {
      name: "PUT /v1/admin/accounts/{accountId}/plan",
      budget: "PUT /v1/admin/accounts/{accountId}/plan",
      expect: 200,
      run: () =>
        new Client(base).request("PUT", `/v1/admin/accounts/${loginAccount.json.id}/plan`, {
          body: { plan: "pro" },
          headers: { authorization: `Bearer ${E2E_ADMIN_TOKEN}` },
        }),
    },
    {
      name: "POST /v1/projects",
      budget: "POST /v1/projects",
      expect: 201,
      run: (i) => session(i).client.request("POST", "/v1/projects", { body: { name: `b${i}` } }),
    },
    {
      name: "GET /v1/projects",
      budget: "GET /v1/projects",
      expect: 200,
      run: (i) => session(i).client.request("GET", "/v1/projects"),
    },
    {
      name: "GET /v1/projects/{projectId}",
      budget: "GET /v1/projects/{projectId}",
      expect: 200,
      run: (i) => session(i).client.request("GET", `/v1/projects/${session(i).projectId}`),
    },
    {
      name: "DELETE /v1/projects/{projectId}",
      budget: "DELETE /v1/projects/{projectId}",
      expect: 204,
      // A new project for each call, made outside the timing; its purge runs in the background.
      prepare: async (i) => {
        scratch = (await patchers(i).client.request("POST", "/v1/projects", { body: { name: `d${i}` } })).json.id;
      },
      run: (i) => patchers(i).client.request("DELETE", `/v1/projects/${scratch}`),
    },
    {
      name: "POST /v1/projects/{projectId}/api-keys",
      budget: "POST /v1/projects/{projectId}/api-keys",
      expect: 201,
      // Revoke the last one first: a project holds at most 100 unrevoked keys.
      prepare: async () => {
        if (scratch) await ws.owner.request("DELETE", `${keysPath}/${scratch}`);
      },
      run: async () => {
        const created = await ws.owner.request("POST", keysPath, {
          body: { name: "b", scopes: ["read"], mode: "test" },
        });
        scratch = created.json?.id ?? "";
        return created;
      },
    },
    {
      name: "GET /v1/projects/{projectId}/api-keys",
      budget: "GET /v1/projects/{projectId}/api-keys",
      expect: 200,
      run: () => ws.owner.request("GET", keysPath),
    },
    {
      name: "DELETE /v1/projects/{projectId}/api-keys/{keyId}",
      budget: "DELETE /v1/projects/{projectId}/api-keys/{keyId}",
      expect: 204,
      prepare: async () => {
        scratch = (await ws.owner.request("POST", keysPath, { body: { name: "b", scopes: ["read"], mode: "test" } }))
          .json.id;
      },
      run: () => ws.owner.request("DELETE", `${keysPath}/${scratch}`),
    },
    {
      name: "GET /v1/projects/{projectId}/encoding-settings",
      budget: "GET /v1/projects/{projectId}/encoding-settings",
      expect: 200,
      run: (i) => session(i).client.request("GET", settingsOf(session(i).projectId)),
    },
    {
      name: "PATCH /v1/projects/{projectId}/encoding-settings",
      budget: "PATCH /v1/projects/{projectId}/encoding-settings",
      expect: 200,
      run: (i) =>
        patchers(i).client.request("PATCH", settingsOf(patchers(i).projectId), {
          body: { mp4FallbackEnabled: i % 2 === 0, watermark: { opacity: (i % 10) / 10 } },
        }),
    },
    {
      name: "PUT /v1/projects/{projectId}/encoding-settings/watermark-image",
      budget: "PUT /v1/projects/{projectId}/encoding-settings/watermark-image",
      expect: 200,
      run: (i) =>
        session(i).client.request("PUT", `${settingsOf(session(i).projectId)}/watermark-image`, {
          body: png,
          headers: { "content-type": "image/png" },
        }),
    },
    {
      name: "DELETE /v1/projects/{projectId}/encoding-settings/watermark-image",
      budget: "DELETE /v1/projects/{projectId}/encoding-settings/watermark-image",
      expect: 200,
      run: (i) => session(i).client.request("DELETE", `${settingsOf(session(i).projectId)}/watermark-image`),
    },
    {
      name: "POST /v1/videos/bulk set_visibility x100",
      budget: "POST /v1/videos/bulk set_visibility",
      expect: 200,
      run: (i) =>
        ws.caller(i)("POST", "/v1/videos/bulk", {
          action: "set_visibility",
          videoIds: hundred,
          visibility: i % 2 ? "public" : "private",
        }),
    },
    {
      name: "POST /v1/videos/bulk delete x100",
      budget: "POST /v1/videos/bulk delete",
      expect: 200,
      samples: BULK_DELETE_SAMPLES,
      prepare: async () => {
        deleteIds = await newVideos(100);
        // Let the last sample's queue consumer (100 R2 aborts) finish: this times the request, and
        // on one machine that background work would otherwise compete with it for the CPU.
        await new Promise((resolve) => setTimeout(resolve, 1500));
      },
      run: (i) => ws.caller(SAMPLES + WARMUP + i)("POST", "/v1/videos/bulk", { action: "delete", videoIds: deleteIds }),
    },
    {
      name: "POST /v1/videos",
      budget: "POST /v1/videos",
      expect: 201,
      run: (i) => ws.caller(i)("POST", "/v1/videos", {}),
    },
    {
      // A first request with an Idempotency-Key: it claims the key, runs, and stores the answer.
      name: "POST /v1/videos with Idempotency-Key, first",
      expect: 201,
      run: (i) => ws.caller(i)("POST", "/v1/videos", {}, { "idempotency-key": `bench-first-${i}` }),
    },
    {
      // The same request again: the stored answer, decrypted, and nothing else.
      name: "POST /v1/videos with Idempotency-Key, replayed",
      expect: 201,
      prepare: async (i) => {
        await ws.caller(i)("POST", "/v1/videos", {}, { "idempotency-key": `bench-replay-${i}` });
      },
      run: (i) => ws.caller(i)("POST", "/v1/videos", {}, { "idempotency-key": `bench-replay-${i}` }),
    },
    { name: "GET /v1/videos", budget: "GET /v1/videos", expect: 200, run: (i) => ws.caller(i)("GET", "/v1/videos") },
    {
      name: "GET /v1/videos/{id}",
      budget: "GET /v1/videos/{id}",
      expect: 200,
      run: (i) => ws.caller(i)("GET", `/v1/videos/${video}`),
    },
    {
      name: "DELETE /v1/videos/{id}",
      budget: "DELETE /v1/videos/{id}",
      expect: 204,
      prepare: async () => {
        scratch = await newVideo();
      },
      run: (i) => ws.caller(i)("DELETE", `/v1/videos/${scratch}`),
    },
    {
      name: "PUT /v1/videos/{id}/upload/parts/{partNumber}",
      budget: "PUT /v1/videos/{id}/upload/parts/{partNumber}",
      expect: 200,
      run: (i) => ws.caller(i)("PUT", `/v1/videos/${video}/upload/parts/1`, new Uint8Array(1024)),
    },
    {
      name: "POST /v1/videos/{id}/upload/complete",
      budget: "POST /v1/videos/{id}/upload/complete",
      expect: 200,
      prepare: async () => {
        uploaded.video = await newVideo();
        uploaded.etag = (
          await api("PUT", `/v1/videos/${uploaded.video}/upload/parts/1`, new Uint8Array(1024))
        ).json.etag;
      },
      run: (i) =>
        ws.caller(i)("POST", `/v1/videos/${uploaded.video}/upload/complete`, {
          parts: [{ partNumber: 1, etag: uploaded.etag }],
        }),
    },
    {
      name: "PUT /v1/videos/{id}/thumbnail 200 KB",
      budget: "PUT /v1/videos/{id}/thumbnail",
      expect: 200,
      run: (i) => putThumbnail(thumbnailWs.caller(i), "small"),
    },
    {
      name: "PUT /v1/videos/{id}/thumbnail 5 MiB",
      expect: 200,
      run: (i) => putThumbnail(thumbnailWs.caller(SAMPLES + WARMUP + i), "large"),
    },
    {
      name: "GET /thumbnails/{projectId}/{videoId}/{file}",
      budget: "GET /thumbnails/{projectId}/{videoId}/{file}",
      expect: 200,
      run: async () => {
        const started = performance.now();
        const response = await fetch(publicUrl);
        const headersMs = performance.now() - started;
        await response.arrayBuffer();
        return { status: response.status, headers: response.headers, headersMs };
      },
    },
    {
      name: "DELETE /v1/videos/{id}/thumbnail",
      budget: "DELETE /v1/videos/{id}/thumbnail",
      expect: 200,
      prepare: async () => {
        await api("PUT", `/v1/videos/${video}/thumbnail`, png, { "content-type": "image/png" });
      },
      run: (i) => ws.caller(i)("DELETE", `/v1/videos/${video}/thumbnail`),
    },
    // Playback (no credential: public videos by id, a token in place of the id), each body read to
    // its end. The first `prepare` makes the videos (seconds of encoding), outside the timing.
    {
      name: "GET /play/{id}/master.m3u8",
      budget: "GET /play/{id}/master.m3u8",
      expect: 200,
      prepare: usePlayback,
      run: getPlayback(() => `${base}/play/${played.id}/master.m3u8`),
    },
    {
      name: "GET /play/{id}/{rendition}/index.m3u8",
      budget: "GET /play/{id}/{rendition}/index.m3u8",
      expect: 200,
      prepare: usePlayback,
      run: getPlayback(() => `${base}/play/${played.id}/${played.segment.path.split("/")[0]}/index.m3u8`),
    },
    {
      // The segment nearest 1 MiB of the video's; its exact size is printed with the floor comparison.
      name: "GET /play/{id}/{rendition}/{segment} ~1 MiB",
      budget: "GET /play/{id}/{rendition}/{segment}",
      expect: 200,
      prepare: usePlayback,
      run: getPlayback(() => `${base}/play/${played.id}/${played.segment.path}`),
    },
    {
      name: "GET /play/{token}/master.m3u8",
      budget: "GET /play/{token}/master.m3u8",
      expect: 200,
      prepare: usePlayback,
      run: getPlayback(() => played.tokenHls),
    },
    {
      name: "GET /play/{id}/video.mp4 range 64 KiB",
      budget: "GET /play/{id}/video.mp4 range",
      expect: 206,
      prepare: usePlayback,
      run: getPlayback(() => played.mp4Url, { range: "bytes=0-65535" }),
    },
    {
      name: "GET /embed/{id}",
      budget: "GET /embed/{id}",
      expect: 200,
      prepare: usePlayback,
      run: getPlayback(() => `${base}/embed/${played.id}`),
    },
    {
      name: "POST /v1/projects/{projectId}/webhook-endpoints",
      budget: "POST /v1/projects/{projectId}/webhook-endpoints",
      expect: 201,
      // Delete the last one first: a project holds at most 20 endpoints.
      prepare: async () => {
        if (scratch) await hooksWs.caller(0)("DELETE", `${hooks}/${scratch}`);
      },
      run: async (i) => {
        const created = await hooksWs.caller(i)("POST", hooks, { url: "https://hooks.example.com/bench" });
        scratch = created.json?.id ?? "";
        return created;
      },
    },
    {
      name: "GET /v1/projects/{projectId}/webhook-endpoints",
      budget: "GET /v1/projects/{projectId}/webhook-endpoints",
      expect: 200,
      run: (i) => hooksWs.caller(i)("GET", hooks),
    },
    {
      name: "GET /v1/projects/{projectId}/webhook-endpoints/{id}",
      budget: "GET /v1/projects/{projectId}/webhook-endpoints/{id}",
      expect: 200,
      run: (i) => hooksWs.caller(i)("GET", `${hooks}/${endpoint}`),
    },
    {
      name: "PATCH /v1/projects/{projectId}/webhook-endpoints/{id}",
      budget: "PATCH /v1/projects/{projectId}/webhook-endpoints/{id}",
      expect: 200,
      run: (i) => hooksWs.caller(i)("PATCH", `${hooks}/${endpoint}`, { description: `d${i}` }),
    },
    {
      name: "POST /v1/projects/{projectId}/webhook-endpoints/{id}/rotate-secret",
      budget: "POST /v1/projects/{projectId}/webhook-endpoints/{id}/rotate-secret",
      expect: 200,
      run: (i) => hooksWs.caller(i)("POST", `${hooks}/${endpoint}/rotate-secret`),
    },
    {
      name: "DELETE /v1/projects/{projectId}/webhook-endpoints/{id}",
      budget: "DELETE /v1/projects/{projectId}/webhook-endpoints/{id}",
      expect: 204,
      prepare: async () => {
        scratch = (await hooksWs.caller(0)("POST", hooks, { url: "https://hooks.example.com/bench" })).json.id;
      },
      run: (i) => hooksWs.caller(i)("DELETE", `${hooks}/${scratch}`),
    },
  ];

  // Deliveries: one endpoint holding SEEDED_ATTEMPTS attempts; pages at the top and 50,000 deep.
  const seeded = await workspace(base, 3 * (DELIVERY_SAMPLES + WARMUP));
  const hookVideo = (await seeded.caller(0)("POST", "/v1/videos", {})).json.video.id;
  // The video's event is published before the endpoint exists (the deletions queue waits up to
  // 1 s for a batch), so no real delivery is attempted.
  await seeded.caller(0)("DELETE", `/v1/videos/${hookVideo}`);
  await new Promise((resolve) => setTimeout(resolve, 2500));
  const seededEndpoint = (
    await seeded.owner.request("POST", `/v1/projects/${seeded.projectId}/webhook-endpoints?mode=test`, {
      body: { url: "https://hooks.example.com/bench" },
    })
  ).json.id as string;
  const seedStarted = performance.now();
  seedAttempts(server.persistTo, seededEndpoint, seeded.projectId);
  console.log(`seeded ${SEEDED_ATTEMPTS} attempts in ${((performance.now() - seedStarted) / 1000).toFixed(1)} s`);
  const deliveriesPath = `/v1/projects/${seeded.projectId}/webhook-endpoints/${seededEndpoint}/deliveries`;
  const deep = SEEDED_ATTEMPTS / 2;
  const deepCursor = await encodeCursor(CURSOR_SECRET, deliveriesCursorScope(seededEndpoint, {}), seededPosition(deep));
  const failedCursor = await encodeCursor(
    CURSOR_SECRET,
    deliveriesCursorScope(seededEndpoint, { state: "failed" }),
    seededPosition(deep),
  );
  // The signed positions must land where the seed says: the page after row `deep` starts at row deep - 1.
  const check = await seeded.caller(0)("GET", `${deliveriesPath}?limit=100&state=failed&cursor=${failedCursor}`);
  if (check.json?.data?.[0]?.attempt !== deep - 100 + 1 || check.json.data.length !== 100) {
    throw new Error(`deliveries seed: unexpected deep page ${check.status} ${check.text.slice(0, 200)}`);
  }
  const pageCaller = (i: number, offset: number) => seeded.caller(offset * (DELIVERY_SAMPLES + WARMUP) + i);
  cases.push(
    {
      name: "GET …/deliveries page of 100, top",
      budget: "GET /v1/projects/{projectId}/webhook-endpoints/{id}/deliveries",
      expect: 200,
      samples: DELIVERY_SAMPLES,
      run: (i) => pageCaller(i, 0)("GET", `${deliveriesPath}?limit=100`),
    },
    {
      name: `GET …/deliveries page of 100, ${deep} deep`,
      expect: 200,
      samples: DELIVERY_SAMPLES,
      run: (i) => pageCaller(i, 1)("GET", `${deliveriesPath}?limit=100&cursor=${deepCursor}`),
    },
    {
      name: "GET …/deliveries failed (1%), deep",
      expect: 200,
      samples: DELIVERY_SAMPLES,
      run: (i) => pageCaller(i, 2)("GET", `${deliveriesPath}?limit=100&state=failed&cursor=${failedCursor}`),
    },
    {
      // Last: each retry is delivered, and fails, in the background (the endpoint's port is closed).
      name: "POST …/deliveries/{attemptId}/retry",
      budget: "POST /v1/projects/{projectId}/webhook-endpoints/{id}/deliveries/{attemptId}/retry",
      expect: 202,
      run: (i) => seeded.caller(i)("POST", `${deliveriesPath}/01BENCH${String(1).padStart(19, "0")}/retry`),
    },
  );

  // Cases that leave work for queue consumers (R2 aborts, deliveries) run last, so that work does not
  // run while the others are timed.
  const heavy = [
    "DELETE /v1/projects/{projectId}",
    "DELETE /v1/videos/{id}",
    "POST /v1/videos/bulk delete x100",
    "POST …/deliveries/{attemptId}/retry",
  ];
  cases.sort((a, b) => heavy.indexOf(a.name) - heavy.indexOf(b.name));
  const results: (Awaited<ReturnType<typeof measure>> & {
    roundTrips: (typeof ROUND_TRIP_BUDGET)[BudgetedRoute] | null;
  })[] = [];
  let thumbnailPeak = Number.NaN;
  let basePeak = Number.NaN;
  const bareCase = cases[0] as Case;
  for (const item of cases.filter((c, i) => i === 0 || selected(c.name))) {
    scratch = "";
    if (item.name.startsWith("PUT /v1/videos/{id}/thumbnail 200"))
      basePeak = peakMemory(workerdPids(server.processGroup), true);
    const measured = await measure(item, bareCase);
    results.push({ ...measured, roundTrips: item.budget ? ROUND_TRIP_BUDGET[item.budget] : null });
    if (item.name.startsWith("GET /thumbnails")) thumbnailPeak = peakMemory(workerdPids(server.processGroup));
  }
  /**
   * Every case again while another tenant keeps deleting videos and its endpoints receive every
   * event: the tail a customer sees when the service is busy with background work. The per-caller
   * limits of the first pass are left to expire first (their window is 60 s).
   */
  async function loadedPass(selected: Case[]) {
    if (LOADED_SAMPLES <= 0) return [];
    await new Promise((resolve) => setTimeout(resolve, 61_000));
    const load = await startBackgroundLoad(server.baseUrl);
    const measured: Awaited<ReturnType<typeof measure>>[] = [];
    let background = "";
    try {
      for (const item of selected) measured.push(await measure({ ...item, samples: LOADED_SAMPLES }, bareCase));
    } finally {
      background = await load.stop();
    }
    const width = Math.max(...measured.map((r) => r.name.length));
    console.log(`\nunder background load (${background}), ${LOADED_SAMPLES} samples a case:`);
    console.log(
      "case".padEnd(width),
      "median".padStart(7),
      "p95".padStart(7),
      "p99".padStart(7),
      "p95/med".padStart(8),
    );
    for (const r of measured) {
      console.log(
        r.name.padEnd(width),
        r.median.toFixed(2).padStart(7),
        r.p95.toFixed(2).padStart(7),
        r.p99.toFixed(2).padStart(7),
        (r.p95 / r.median).toFixed(2).padStart(8),
      );
    }
    return measured;
  }

  const bare = results[0]?.median ?? Number.NaN;
  const xBare = (r: (typeof results)[number]) => r.median / r.bareMedian;
  const xBareOf = (name: string) => {
    const found = results.find((r) => r.name.startsWith(name));
    return found ? xBare(found) : Number.NaN;
  };
  console.log(`concurrency 1, ${WARMUP} warm-up calls per case; latency measured by the client over loopback`);
  console.log(
    "x bare: median over the median of the bare route (an unknown path: the dev proxy, the runtime, no work),",
  );
  console.log(`  called right before each of the case's calls (the bare route's own case: ${bare.toFixed(2)} ms)`);
  console.log("worker ms: the Worker's own time (Server-Timing); round trips from test/round-trip-budget.ts");
  const width = Math.max(...results.map((r) => r.name.length));
  console.log(
    "case".padEnd(width),
    "n".padStart(4),
    "median".padStart(7),
    "p95".padStart(7),
    "p99".padStart(7),
    "x bare".padStart(7),
    "worker".padStart(7),
    "D1".padStart(3),
    "DO".padStart(3),
    "R2".padStart(3),
    "Q".padStart(3),
  );
  for (const r of results) {
    const trips = r.roundTrips;
    console.log(
      r.name.padEnd(width),
      String(r.samples).padStart(4),
      r.median.toFixed(2).padStart(7),
      r.p95.toFixed(2).padStart(7),
      r.p99.toFixed(2).padStart(7),
      xBare(r).toFixed(2).padStart(7),
      r.workerMedian.toFixed(1).padStart(7),
      ...(trips ? [trips.d1, trips.do, trips.r2, trips.queue] : ["", "", "", ""]).map((n) => String(n).padStart(3)),
    );
  }
  // Ratios between cases go through each one's own bare ratio, for the same reason.
  // Each line only when the cases it compares ran (BENCH_ONLY may leave them out).
  const ratioLine = (label: string, value: number) => {
    if (Number.isFinite(value)) console.log(`${label}: ${value.toFixed(2)}`);
  };
  const single = xBareOf("GET /v1/videos/{id}");
  ratioLine("bulk delete x100 / GET video", xBareOf("POST /v1/videos/bulk delete") / single);
  ratioLine("deliveries page of 100 / GET video", xBareOf("GET …/deliveries page of 100, top") / single);
  const top = xBareOf("GET …/deliveries page of 100, top");
  for (const r of results.filter((r) => r.name.startsWith("GET …/deliveries"))) {
    ratioLine(`${r.name} / the top page`, xBare(r) / top);
  }
  if (Number.isFinite(basePeak) && Number.isFinite(thumbnailPeak)) {
    console.log(
      `workerd peak RSS (VmHWM, ${workerdPids(server.processGroup).length} processes): ${basePeak.toFixed(1)} MiB before the thumbnail uploads, ` +
        `${thumbnailPeak.toFixed(1)} MiB after them`,
    );
  }
  // The playback floor runs whenever a playback case ran, or when it is selected by its name.
  let playbackFloor = null;
  let frames = null;
  if (playbackState || selected("playback floor")) {
    const { id, duration, segment } = await playback();
    frames = await benchFrames(base, id, duration, 10, SAMPLES);
    // The floor row of a frame: the same bytes the repeated asks serve, from the floor's R2.
    const frame = `thumbnail?time=${(duration / 2).toFixed(3)}&width=640`;
    playbackFloor = await comparePlaybackWithFloor(base, id, ["master.m3u8", segment.path, frame], SAMPLES);
  }
  const loaded = await loadedPass(cases.filter((c, i) => i === 0 || selected(c.name)));
  const webhooks = selected("webhook isolation") ? await benchWebhookIsolation(server.baseUrl) : null;
  mkdirSync(".bench", { recursive: true });
  writeFileSync(
    ".bench/results.json",
    `${JSON.stringify(
      {
        when: new Date().toISOString(),
        warmup: WARMUP,
        bare,
        pipeline: pipeline?.summary ?? null,
        viewer,
        results,
        playbackFloor,
        frames,
        loaded,
        webhooks,
      },
      null,
      2,
    )}\n`,
  );
  console.log("written to .bench/results.json");
} finally {
  await server.stop();
}
