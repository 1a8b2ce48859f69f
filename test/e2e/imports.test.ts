import { createServer, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { gzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { keyedTenant } from "./client.ts";
import { clip, probe, waitForStatus } from "./media.ts";
import { type DevServer, startDevServer } from "./server.ts";

const MiB = 1024 * 1024;

/**
 * Imports from a URL (docs/imports.md) through `npm run dev`'s real queue, import objects and
 * encoder: a local origin serves a real video with Range, as a file server does, and misbehaves as
 * an attacker's would. The pace's window is 15 s here (IMPORT_PACE_WINDOW_SECONDS, development
 * only), so an import ends by its clock within the test; the real 60 s is tested in
 * test/imports/clock.test.ts on a virtual clock.
 */

const WINDOW_SECONDS = 15;

let server: DevServer;
let tenant: Awaited<ReturnType<typeof keyedTenant>>;
let other: Awaited<ReturnType<typeof keyedTenant>>;
let origin: Awaited<ReturnType<typeof startOrigin>>;
let source: Uint8Array;

/**
 * The clip with an MP4 `free` box appended (a top-level box every reader skips), so the file is
 * larger than one import part (8 MiB) and a fetch cut after 9 MiB has a part stored to resume from.
 */
function padded(video: Uint8Array, bytes: number): Uint8Array {
  const out = new Uint8Array(video.byteLength + bytes);
  out.set(video);
  const box = new DataView(out.buffer, video.byteLength, 8);
  box.setUint32(0, bytes);
  out.set(new TextEncoder().encode("free"), video.byteLength + 4);
  return out;
}

/** The origins that hold a fetch (see `startOrigin`). */
const HOLDING = ["/stall.mp4", "/byte.mp4", "/slow.mp4", "/huge.mp4"];

/** Sends a piece every `everyMs` until the answer is closed, by either side. */
function trickle(response: ServerResponse, piece: number, everyMs: number) {
  const timer = setInterval(() => response.write(new Uint8Array(piece)), everyMs);
  response.on("close", () => clearInterval(timer));
}

/** Sends as fast as the reader takes it until the answer is closed. */
function flood(response: ServerResponse) {
  const block = new Uint8Array(MiB);
  const write = () => {
    while (!response.destroyed && response.write(block)) {}
  };
  response.on("drain", write);
  write();
}

/**
 * A file server for `bytes`: `/video.mp4`, `/cut.mp4` (its first answer cut after 9 MiB),
 * `/video.mp4.gz` (gzip, as a server that compresses whatever it sends), and origins that hold a
 * fetch: `/stall.mp4` (headers, then nothing), `/byte.mp4` (a byte a second), `/slow.mp4` (64 KiB
 * every 200 ms: its pace kept, a part in 26 s), `/huge.mp4` (40 GiB as fast as it is read). Anything
 * else is 404. `closed` says when each path's connection was closed.
 */
async function startOrigin(bytes: Uint8Array) {
  const hits: { path: string; range: string | null; ifRange: string | null }[] = [];
  const closed = new Map<string, number>();
  const gzipped = gzipSync(bytes);
  let cut = false;
  const http: Server = createServer((request, response) => {
    const path = request.url ?? "/";
    hits.push({ path, range: request.headers.range ?? null, ifRange: (request.headers["if-range"] as string) ?? null });
    response.on("close", () => closed.set(path, Date.now()));
    if (HOLDING.includes(path)) {
      response.writeHead(200, { "content-type": "video/mp4", "content-length": 40 * 1024 * MiB });
      if (path === "/byte.mp4") trickle(response, 1, 1000);
      if (path === "/slow.mp4") trickle(response, 64 * 1024, 200);
      if (path === "/huge.mp4") flood(response);
      return;
    }
    if (path === "/video.mp4.gz") {
      response.writeHead(200, {
        "content-type": "video/mp4",
        "content-encoding": "gzip",
        "content-length": gzipped.byteLength,
      });
      response.end(gzipped);
      return;
    }
    if (path !== "/video.mp4" && path !== "/cut.mp4") {
      response.writeHead(404, "Not Found").end("no such file");
      return;
    }
    const etag = '"source-1"';
    const asked = /^bytes=(\d+)-$/.exec(request.headers.range ?? "");
    const start = asked ? Number(asked[1]) : 0;
    const body = bytes.subarray(start);
    const headers = { etag, "content-type": "video/mp4", "accept-ranges": "bytes", "content-length": body.byteLength };
    if (asked) {
      response.writeHead(206, {
        ...headers,
        "content-range": `bytes ${start}-${bytes.byteLength - 1}/${bytes.byteLength}`,
      });
    } else {
      response.writeHead(200, headers);
    }
    if (path === "/cut.mp4" && !cut) {
      cut = true;
      response.write(body.subarray(0, 9 * MiB), () => setTimeout(() => response.socket?.destroy(), 50));
      return;
    }
    response.end(body);
  });
  await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
  const { port } = http.address() as AddressInfo;
  return {
    url: (path: string) => `http://127.0.0.1:${port}${path}`,
    hits,
    closed,
    close: () =>
      new Promise<void>((resolve) => {
        http.closeAllConnections();
        http.close(() => resolve());
      }),
  };
}

beforeAll(async () => {
  source = padded(await clip({ width: 640, height: 360, seconds: 3 }), 12 * MiB);
  origin = await startOrigin(source);
  server = await startDevServer(["--var", `IMPORT_PACE_WINDOW_SECONDS:${WINDOW_SECONDS}`]);
  tenant = await keyedTenant(server.baseUrl, { name: "imports" });
  other = await keyedTenant(server.baseUrl, { name: "imports-b" });
});

afterAll(async () => {
  await server?.stop();
  await origin?.close();
});

async function startImport(url: string, call = tenant.call) {
  const created = await call("POST", "/v1/videos", { sourceUrl: url, title: "imported" });
  expect(created.status).toBe(201);
  expect(created.json.upload).toBeUndefined();
  expect(created.json.video.status).toBe("importing");
  return created.json.video.id as string;
}

describe("imports from a URL, end to end through npm run dev", () => {
  it("fetches a real video, which goes importing → ready and plays", { timeout: 120_000 }, async () => {
    const id = await startImport(origin.url("/video.mp4"));
    const video = await waitForStatus(tenant.call, id, ["ready", "errored"], 100);
    expect(video.error).toBeNull();
    expect(video.status).toBe("ready");
    expect(video.width).toBe(640);
    expect(video.duration).toBeGreaterThan(2.9);
    const hls = video.playback?.hls ?? "";
    expect((await fetch(hls)).status).toBe(200);
    const { streams } = await probe(hls);
    expect(streams.find((stream) => stream.codec_type === "video")).toMatchObject({ width: 640, height: 360 });
    expect(origin.hits.filter((hit) => hit.path === "/video.mp4")).toEqual([
      { path: "/video.mp4", range: null, ifRange: null },
    ]);
  });

  it("fails a 404 for good: errored, import_failed, the status in its message", { timeout: 60_000 }, async () => {
    const id = await startImport(origin.url("/missing.mp4"));
    const video = await waitForStatus(tenant.call, id, ["errored", "uploaded", "processing", "ready"], 30);
    expect(video.status).toBe("errored");
    expect(video.error?.code).toBe("import_failed");
    expect(video.error?.message).toContain("404");
  });

  it("resumes by Range after the origin cut the connection half-way, and the video becomes ready", {
    timeout: 150_000,
  }, async () => {
    const id = await startImport(origin.url("/cut.mp4"));
    const video = await waitForStatus(tenant.call, id, ["ready", "errored"], 130);
    expect(video.error).toBeNull();
    expect(video.status).toBe("ready");
    const hits = origin.hits.filter((hit) => hit.path === "/cut.mp4");
    expect(hits).toEqual([
      { path: "/cut.mp4", range: null, ifRange: null },
      { path: "/cut.mp4", range: `bytes=${8 * MiB}-`, ifRange: '"source-1"' },
    ]);
    const { streams } = await probe(video.playback?.hls ?? "");
    expect(streams.some((stream) => stream.codec_type === "video")).toBe(true);
  });

  it("a project's stalled, byte-a-second, slow and huge origins hold no other project's import; the first two end by their own clock, a delete stops the others at once", {
    timeout: 90_000,
  }, async () => {
    const stalled = await startImport(origin.url("/stall.mp4"));
    const byByte = await startImport(origin.url("/byte.mp4"));
    const slow = await startImport(origin.url("/slow.mp4"));
    const huge = await startImport(origin.url("/huge.mp4"));
    // Another project's 3 s video, from an origin that compresses it.
    const created = Date.now();
    const quick = await startImport(origin.url("/video.mp4.gz"), other.call);
    const past = await waitForStatus(other.call, quick, ["uploaded", "processing", "ready", "errored"], 10);
    expect(past.status).not.toBe("errored");
    console.log(`the other project's import was ${past.status} ${Date.now() - created} ms after its create`);
    expect(Date.now() - created).toBeLessThan(10_000);
    for (const id of [stalled, byByte, slow, huge]) {
      expect((await tenant.call("GET", `/v1/videos/${id}`)).json.status).toBe("importing");
    }
    for (const [id, words] of [
      [stalled, `nothing received for ${WINDOW_SECONDS} s`],
      [byByte, `the origin sent less than 64 KiB in ${WINDOW_SECONDS} s`],
    ] as const) {
      const video = await waitForStatus(tenant.call, id, ["errored", "uploaded"], WINDOW_SECONDS + 15);
      expect(video.error).toEqual({ code: "import_failed", message: `The import failed: ${words}.` });
    }
    expect(origin.closed.has("/stall.mp4") && origin.closed.has("/byte.mp4")).toBe(true);
    // The slow one (no part stored yet: the delete's stop ends it) and the huge one go on until
    // their videos are deleted.
    for (const [id, path] of [
      [slow, "/slow.mp4"],
      [huge, "/huge.mp4"],
    ] as const) {
      expect(origin.closed.has(path)).toBe(false);
      const deleted = Date.now();
      expect((await tenant.call("DELETE", `/v1/videos/${id}`)).status).toBe(204);
      while (!origin.closed.has(path) && Date.now() - deleted < 10_000) {
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      const closedAfter = (origin.closed.get(path) ?? Number.POSITIVE_INFINITY) - deleted;
      console.log(`${path}: the connection closed ${closedAfter} ms after the delete was sent`);
      expect(closedAfter).toBeLessThan(2_000);
    }
    // The compressed source was stored as the bytes it means: the video plays 3 s.
    const ready = await waitForStatus(other.call, quick, ["ready", "errored"], 60);
    expect(ready.status).toBe("ready");
    expect(ready.duration).toBeGreaterThan(2.9);
    // Nothing was asked again.
    expect(origin.hits.filter((hit) => HOLDING.includes(hit.path))).toHaveLength(4);
  });
});
