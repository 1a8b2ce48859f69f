// Whether imports keep memory (docs/imports.md, "Memory"), against `npm run dev`: on one fresh
// server, BENCH_MEMORY_ROUNDS (3) rounds of BENCH_MEMORY_VIDEOS (30) videos of 12 MiB uploaded
// through the part API; on another, the same rounds imported from a local origin, then a round from
// hostile origins as the red team's (headers then nothing, a byte a second, a 60,000-character
// reason phrase, a gzip answer). BENCH_MEMORY_AT_ONCE (5) at a time. After each round it prints the
// resident memory of the server's workerd processes (the Worker with Miniflare's R2, D1, queues and
// Durable Objects; anonymous and file-backed), the same after 20 s idle, and the Worker isolate's
// JavaScript heap and ArrayBuffers after a full garbage collection (read over the inspector, as
// DevTools reads it). Both back at their start after each round mean the Worker keeps nothing;
// resident memory that grows as much for uploads as for imports is the local stack's.
//   BENCH_MEMORY_HOSTILE picks the hostile origins (default "stall,byte,reason,gzip").
//   The bytes are not a video: their encodings fail at the probe, the same for every round.
import { randomBytes } from "node:crypto";
import { createServer, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { gzipSync } from "node:zlib";
import { keyedTenant } from "../test/e2e/client.ts";
import { freePort, startDevServer } from "../test/e2e/server.ts";
import { workerdMemory } from "./workerd-memory.ts";

const MiB = 1024 * 1024;
const SIZE = 12 * MiB;
const VIDEOS = Number(process.env.BENCH_MEMORY_VIDEOS ?? 30);
const ROUNDS = Number(process.env.BENCH_MEMORY_ROUNDS ?? 3);
const AT_ONCE = Number(process.env.BENCH_MEMORY_AT_ONCE ?? 5);
const WINDOW_SECONDS = 5;

/** The origin: `/file` (12 MiB, with Range), and the hostile ones. */
async function startOrigin() {
  const bytes = randomBytes(SIZE);
  const gzipped = gzipSync(bytes);
  const held = new Set<ServerResponse>();
  const server = createServer((request, response) => {
    const path = request.url ?? "/";
    if (path === "/file") {
      const asked = /^bytes=(\d+)-$/.exec(request.headers.range ?? "");
      const start = asked ? Number(asked[1]) : 0;
      const headers = { etag: '"bench"', "content-length": SIZE - start };
      if (asked) response.writeHead(206, { ...headers, "content-range": `bytes ${start}-${SIZE - 1}/${SIZE}` });
      else response.writeHead(200, headers);
      response.end(bytes.subarray(start));
    } else if (path === "/gzip") {
      response.writeHead(200, { "content-encoding": "gzip", "content-length": gzipped.byteLength });
      response.end(gzipped);
    } else if (path === "/reason") {
      response.writeHead(410, `Gone ${"x".repeat(60_000)}`).end("gone");
    } else {
      // `/stall` (headers, then nothing) and `/byte` (a byte a second), until the Worker lets go.
      held.add(response);
      response.writeHead(200, { "content-length": SIZE });
      const timer = path === "/byte" ? setInterval(() => response.write(new Uint8Array(1)), 1000) : undefined;
      response.on("close", () => {
        clearInterval(timer);
        held.delete(response);
      });
    }
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: (path: string) => `http://127.0.0.1:${port}${path}`,
    held,
    part: (n: number) => bytes.subarray((n - 1) * 8 * MiB, n * 8 * MiB),
    close: () => {
      server.closeAllConnections();
      server.close();
    },
  };
}

/**
 * The Worker isolate's memory after a full collection, over the inspector (Chrome DevTools
 * Protocol): its JavaScript heap, and the ArrayBuffers' backing stores (kept outside the heap: a
 * part buffer held would show there, not in the heap).
 */
async function heapAfterCollection(inspectorPort: number): Promise<{ heap: number; buffers: number }> {
  const targets = (await (await fetch(`http://127.0.0.1:${inspectorPort}/json/list`)).json()) as {
    webSocketDebuggerUrl: string;
  }[];
  const url = targets[0]?.webSocketDebuggerUrl;
  if (!url) throw new Error("the inspector lists no Worker");
  // The inspector wants an Origin of its own host (Node's WebSocket takes headers as undici's option).
  const socket = new WebSocket(url, { headers: { origin: "http://127.0.0.1" } } as unknown as string[]);
  await new Promise((resolve, reject) => {
    socket.addEventListener("open", resolve, { once: true });
    socket.addEventListener("error", reject, { once: true });
  });
  let next = 0;
  const call = (method: string) =>
    new Promise<Record<string, number>>((resolve) => {
      const id = ++next;
      const listen = (event: MessageEvent) => {
        const message = JSON.parse(String(event.data)) as { id?: number; result?: Record<string, number> };
        if (message.id !== id) return;
        socket.removeEventListener("message", listen);
        resolve(message.result ?? {});
      };
      socket.addEventListener("message", listen);
      socket.send(JSON.stringify({ id, method }));
    });
  try {
    await call("HeapProfiler.collectGarbage");
    const usage = await call("Runtime.getHeapUsage");
    return { heap: usage.usedSize ?? Number.NaN, buffers: usage.backingStorageSize ?? Number.NaN };
  } finally {
    socket.close();
  }
}

const mib = (bytes: number) => `${(bytes / MiB).toFixed(0)} MiB`;

/** Runs `work` for each of `VIDEOS`, `AT_ONCE` at a time. */
async function rounds(work: (n: number) => Promise<void>) {
  let next = 0;
  await Promise.all(
    Array.from({ length: AT_ONCE }, async () => {
      while (next < VIDEOS) await work(next++);
    }),
  );
}

type Tenant = Awaited<ReturnType<typeof keyedTenant>>;

/** Runs `work` on a fresh dev server, reporting its memory as it starts and after each round. */
async function onFreshServer(work: (tenant: Tenant, report: (what: string) => Promise<void>) => Promise<void>) {
  const inspectorPort = await freePort();
  const server = await startDevServer([
    "--inspector-port",
    String(inspectorPort),
    "--var",
    `IMPORT_PACE_WINDOW_SECONDS:${WINDOW_SECONDS}`,
  ]);
  try {
    const tenant = await keyedTenant(server.baseUrl, { name: "bench-import-memory" });
    const report = async (what: string) => {
      const now = workerdMemory(server.processGroup);
      await new Promise((resolve) => setTimeout(resolve, 20_000));
      const idle = workerdMemory(server.processGroup);
      const isolate = await heapAfterCollection(inspectorPort);
      console.log(
        `${what.padEnd(36)} workerd ${mib(now.total)}, ${mib(idle.total)} after 20 s idle ` +
          `(${mib(idle.anonymous)} anonymous, ${mib(idle.file)} file); ` +
          `Worker heap ${mib(isolate.heap)}, its buffers ${mib(isolate.buffers)}`,
      );
    };
    await report("started");
    await work(tenant, report);
  } finally {
    await server.stop();
  }
}

const origin = await startOrigin();
try {
  await onFreshServer(async (tenant, report) => {
    for (let round = 1; round <= ROUNDS; round++) {
      await rounds(async () => {
        const created = await tenant.call("POST", "/v1/videos", {});
        const id = created.json.video.id as string;
        const parts = [];
        for (const n of [1, 2]) {
          const put = await tenant.call("PUT", `/v1/videos/${id}/upload/parts/${n}`, origin.part(n));
          parts.push({ partNumber: n, etag: put.json.etag as string });
        }
        const done = await tenant.call("POST", `/v1/videos/${id}/upload/complete`, { parts });
        if (done.status !== 200) throw new Error(`complete: ${done.status} ${done.text}`);
      });
      await report(`${round * VIDEOS} uploads of 12 MiB`);
    }
  });
  await onFreshServer(async (tenant, report) => {
    const importOf = async (url: string) => {
      const created = await tenant.call("POST", "/v1/videos", { sourceUrl: url });
      if (created.status !== 201) throw new Error(`create: ${created.status} ${created.text}`);
      const id = created.json.video.id as string;
      while (((await tenant.call("GET", `/v1/videos/${id}`)).json as { status: string }).status === "importing") {
        await new Promise((resolve) => setTimeout(resolve, 250));
      }
    };
    for (let round = 1; round <= ROUNDS; round++) {
      await rounds(() => importOf(origin.url("/file")));
      await report(`${round * VIDEOS} imports of 12 MiB`);
    }
    const hostile = (process.env.BENCH_MEMORY_HOSTILE ?? "stall,byte,reason,gzip").split(",").map((name) => `/${name}`);
    await rounds((n) => importOf(origin.url(hostile[n % hostile.length] as string)));
    await report(`then ${VIDEOS} hostile imports`);
    console.log(`connections the Worker still holds open: ${origin.held.size}`);
  });
} finally {
  origin.close();
}
