// Direct uploads against the part API (issue 19): the same 100 MiB sent by tus-js-client in 8 MiB
// PATCHes, and by the part API in 8 MiB parts, against `npm run dev`'s wrangler. Prints the
// throughput of each, and the Durable Object's added latency per PATCH: an 8 MiB PATCH against an
// 8 MiB part PUT (the same bytes to R2, plus the object's hop and its D1 check), and a HEAD.
//   BENCH_TUS_MIB (100), BENCH_TUS_CHUNK_MIB (8), BENCH_TUS_RUNS (3) change the sizes and repeats.
import { randomBytes } from "node:crypto";
import * as tus from "tus-js-client";
import { keyedTenant } from "../test/e2e/client.ts";
import { startDevServer } from "../test/e2e/server.ts";
import { percentile } from "./percentile.ts";

const MiB = 1024 * 1024;
const TOTAL = Number(process.env.BENCH_TUS_MIB ?? 100) * MiB;
const CHUNK = Number(process.env.BENCH_TUS_CHUNK_MIB ?? 8) * MiB;
const RUNS = Number(process.env.BENCH_TUS_RUNS ?? 3);

type Tenant = Awaited<ReturnType<typeof keyedTenant>>;
type Run = { seconds: number; requestMs: number[] };

async function partUpload(tenant: Tenant, source: Buffer): Promise<Run> {
  const started = performance.now();
  const created = await tenant.call("POST", "/v1/videos", {});
  const videoId = created.json.video.id as string;
  const parts: { partNumber: number; etag: string }[] = [];
  const requestMs: number[] = [];
  for (let at = 0, n = 1; at < source.length; at += CHUNK, n++) {
    const t = performance.now();
    const put = await tenant.call("PUT", `/v1/videos/${videoId}/upload/parts/${n}`, source.subarray(at, at + CHUNK));
    if (put.status !== 200) throw new Error(`part ${n}: ${put.status} ${put.text}`);
    if (at + CHUNK <= source.length) requestMs.push(performance.now() - t);
    parts.push({ partNumber: n, etag: put.json.etag });
  }
  const done = await tenant.call("POST", `/v1/videos/${videoId}/upload/complete`, { parts });
  if (done.json?.status !== "uploaded") throw new Error(`complete: ${done.status} ${done.text}`);
  return { seconds: (performance.now() - started) / 1000, requestMs };
}

async function tusUpload(tenant: Tenant, source: Buffer): Promise<Run & { headMs: number }> {
  const started = performance.now();
  const created = await tenant.call("POST", "/v1/uploads", {});
  const { url, video } = created.json as { url: string; video: { id: string } };
  const requestMs: number[] = [];
  const sentAt = new Map<unknown, number>();
  let location = "";
  await new Promise<void>((resolve, reject) => {
    const upload = new tus.Upload(source, {
      endpoint: url,
      chunkSize: CHUNK,
      retryDelays: [],
      onBeforeRequest: (request) => {
        sentAt.set(request, performance.now());
      },
      onAfterResponse: (request, response) => {
        const at = sentAt.get(request);
        const offset = Number(response.getHeader("Upload-Offset"));
        // Whole chunks only: the last, shorter one also completes the upload.
        if (request.getMethod() === "PATCH" && at !== undefined && offset < source.length) {
          requestMs.push(performance.now() - at);
        }
      },
      onSuccess: () => {
        location = upload.url ?? "";
        resolve();
      },
      onError: reject,
    });
    upload.start();
  });
  const seconds = (performance.now() - started) / 1000;
  const status = await tenant.call("GET", `/v1/videos/${video.id}`);
  if (status.json.status !== "uploaded") throw new Error(`tus upload ended ${status.json.status}`);
  const heads: number[] = [];
  for (let i = 0; i < 20; i++) {
    const t = performance.now();
    await fetch(location, { method: "HEAD", headers: { "tus-resumable": "1.0.0" } });
    heads.push(performance.now() - t);
  }
  return {
    seconds,
    requestMs,
    headMs: percentile(
      heads.sort((a, b) => a - b),
      50,
    ),
  };
}

const median = (values: number[]) =>
  percentile(
    [...values].sort((a, b) => a - b),
    50,
  );
const mibps = (seconds: number) => TOTAL / MiB / seconds;

export async function benchTus(baseUrl: string) {
  const tenant = await keyedTenant(baseUrl, { name: "bench tus", keys: 4 });
  const source = randomBytes(TOTAL);
  // A first small upload each way warms the Worker, the object's class and R2.
  await partUpload(tenant, source.subarray(0, CHUNK));
  const parts: Run[] = [];
  const tuses: (Run & { headMs: number })[] = [];
  for (let i = 0; i < RUNS; i++) {
    // Alternated, so neither way gets the quieter half of the run.
    parts.push(await partUpload(tenant, source));
    tuses.push(await tusUpload(tenant, source));
  }
  const part = {
    mibps: median(parts.map((r) => mibps(r.seconds))),
    requestMs: median(parts.flatMap((r) => r.requestMs)),
  };
  const direct = {
    mibps: median(tuses.map((r) => mibps(r.seconds))),
    requestMs: median(tuses.flatMap((r) => r.requestMs)),
    headMs: median(tuses.map((r) => r.headMs)),
  };
  const mib = TOTAL / MiB;
  const chunk = CHUNK / MiB;
  console.log(
    `uploads: ${mib} MiB in ${chunk} MiB requests, median of ${RUNS} runs each (whole upload, create to complete)`,
  );
  console.log(
    `  part API          ${part.mibps.toFixed(1).padStart(6)} MiB/s   per ${chunk} MiB PUT   ${part.requestMs.toFixed(0).padStart(5)} ms`,
  );
  console.log(
    `  tus (Node client) ${direct.mibps.toFixed(1).padStart(6)} MiB/s   per ${chunk} MiB PATCH ${direct.requestMs.toFixed(0).padStart(5)} ms`,
  );
  console.log(`  part API / tus throughput: ${(part.mibps / direct.mibps).toFixed(2)}x`);
  console.log(
    `  the object's added latency per PATCH: ${(direct.requestMs - part.requestMs).toFixed(0)} ms (PATCH - PUT, medians); a HEAD (Worker, object, its D1 check) ${direct.headMs.toFixed(1)} ms`,
  );
  return { part, tus: direct };
}

// `npm run bench:tus` runs this on a dev server of its own (`npm run dev`'s script).
if (import.meta.main) {
  const server = await startDevServer();
  try {
    await benchTus(server.baseUrl);
  } finally {
    await server.stop();
  }
}
