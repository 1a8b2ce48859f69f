// An import from a URL (docs/imports.md) against `npm run dev`'s wrangler: a local origin serves
// BENCH_IMPORT_MIB (1024) MiB, and the video is timed from its creation until it is past
// `importing` (its source whole in R2). Prints the throughput, and the resident memory of the dev
// server's workerd processes (the Worker, with Miniflare's local R2 and D1 in the same processes)
// before and at its peak during the import: an upper bound for what the import holds. For
// comparison, the same bytes uploaded through the part API in 8 MiB parts on a fresh dev server,
// with the same memory figures: what the local stack (Miniflare's R2 and D1) grows by anyway.
//   BENCH_IMPORT_MIB changes the size. The bytes are not a video: encoding then fails, unmeasured.
import { randomBytes } from "node:crypto";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { loadavg } from "node:os";
import { keyedTenant } from "../test/e2e/client.ts";
import { startDevServer } from "../test/e2e/server.ts";
import { workerdMemory } from "./workerd-memory.ts";

const MiB = 1024 * 1024;
const TOTAL = Number(process.env.BENCH_IMPORT_MIB ?? 1024) * MiB;

/** An origin serving TOTAL bytes (one random MiB over and over) with Range, streamed with backpressure. */
async function startOrigin() {
  const block = randomBytes(MiB);
  const server = createServer(async (request, response) => {
    const asked = /^bytes=(\d+)-$/.exec(request.headers.range ?? "");
    const start = asked ? Number(asked[1]) : 0;
    const headers = { etag: '"bench"', "content-type": "video/mp4", "content-length": TOTAL - start };
    if (asked) response.writeHead(206, { ...headers, "content-range": `bytes ${start}-${TOTAL - 1}/${TOTAL}` });
    else response.writeHead(200, headers);
    for (let at = start; at < TOTAL && !response.destroyed; ) {
      const offset = at % MiB;
      const chunk = block.subarray(offset, Math.min(MiB, offset + (TOTAL - at)));
      at += chunk.byteLength;
      if (!response.write(chunk)) await new Promise((resolve) => response.once("drain", resolve));
    }
    response.end();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}/big.mp4`, close: () => server.close() };
}

type Measured = { seconds: number; before: number; peak: number; load: string };

/** Runs `work` on a fresh dev server, sampling workerd's memory every 250 ms until it is done. */
async function measure(work: (tenant: Awaited<ReturnType<typeof keyedTenant>>) => Promise<void>): Promise<Measured> {
  const server = await startDevServer();
  try {
    const tenant = await keyedTenant(server.baseUrl, { name: "bench-import" });
    const before = workerdMemory(server.processGroup).total;
    const load = loadavg()[0]?.toFixed(2) ?? "?";
    let peak = before;
    const sampler = setInterval(() => {
      peak = Math.max(peak, workerdMemory(server.processGroup).total);
    }, 250);
    const started = performance.now();
    try {
      await work(tenant);
    } finally {
      clearInterval(sampler);
    }
    return { seconds: (performance.now() - started) / 1000, before, peak, load };
  } finally {
    await server.stop();
  }
}

function report(what: string, run: Measured) {
  console.log(`${what}: ${run.seconds.toFixed(1)} s, ${(TOTAL / 1e6 / run.seconds).toFixed(1)} MB/s`);
  console.log(
    `  workerd resident memory: ${(run.before / MiB).toFixed(0)} MiB before, ${(run.peak / MiB).toFixed(0)} MiB at ` +
      `its peak (+${((run.peak - run.before) / MiB).toFixed(0)} MiB); load average ${run.load} at the start`,
  );
}

const origin = await startOrigin();
try {
  const imported = await measure(async (tenant) => {
    const created = await tenant.call("POST", "/v1/videos", { sourceUrl: origin.url });
    if (created.status !== 201) throw new Error(`create: ${created.status} ${created.text}`);
    const id = created.json.video.id as string;
    for (;;) {
      await new Promise((resolve) => setTimeout(resolve, 250));
      const read = await tenant.call("GET", `/v1/videos/${id}`);
      if (read.json.error?.code === "import_failed") throw new Error(`import failed: ${read.text}`);
      if (read.json.status !== "importing") return;
    }
  });
  report(`import of ${TOTAL / MiB} MiB from a local origin`, imported);
  const block = randomBytes(MiB);
  const part = Buffer.concat(Array.from({ length: 8 }, () => block));
  const uploaded = await measure(async (tenant) => {
    const created = await tenant.call("POST", "/v1/videos", {});
    const id = created.json.video.id as string;
    const parts: { partNumber: number; etag: string }[] = [];
    for (let at = 0, n = 1; at < TOTAL; at += part.byteLength, n++) {
      const put = await tenant.call("PUT", `/v1/videos/${id}/upload/parts/${n}`, part.subarray(0, TOTAL - at));
      if (put.status !== 200) throw new Error(`part ${n}: ${put.status} ${put.text}`);
      parts.push({ partNumber: n, etag: put.json.etag as string });
    }
    const done = await tenant.call("POST", `/v1/videos/${id}/upload/complete`, { parts });
    if (done.status !== 200) throw new Error(`complete: ${done.status} ${done.text}`);
  });
  report(`the same ${TOTAL / MiB} MiB uploaded through the part API in 8 MiB parts`, uploaded);
} finally {
  origin.close();
}
