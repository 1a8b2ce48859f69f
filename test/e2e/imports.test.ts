import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { keyedTenant } from "./client.ts";
import { clip, probe, waitForStatus } from "./media.ts";
import { type DevServer, startDevServer } from "./server.ts";

const MiB = 1024 * 1024;

/**
 * Imports from a URL (contract §19) through `npm run dev`'s real queue consumer and encoder: a
 * local origin serves a real video with Range, as a file server does.
 */

let server: DevServer;
let tenant: Awaited<ReturnType<typeof keyedTenant>>;
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

/** A file server for `bytes`: `/video.mp4`, `/cut.mp4` (its first answer cut after 9 MiB), anything else 404. */
async function startOrigin(bytes: Uint8Array) {
  const hits: { path: string; range: string | null; ifRange: string | null }[] = [];
  let cut = false;
  const http: Server = createServer((request, response) => {
    const path = request.url ?? "/";
    hits.push({ path, range: request.headers.range ?? null, ifRange: (request.headers["if-range"] as string) ?? null });
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
    close: () => new Promise<void>((resolve) => http.close(() => resolve())),
  };
}

beforeAll(async () => {
  source = padded(await clip({ width: 640, height: 360, seconds: 3 }), 12 * MiB);
  origin = await startOrigin(source);
  server = await startDevServer();
  tenant = await keyedTenant(server.baseUrl, { name: "imports" });
});

afterAll(async () => {
  await server?.stop();
  await origin?.close();
});

async function startImport(url: string) {
  const created = await tenant.call("POST", "/v1/videos", { sourceUrl: url, title: "imported" });
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
});
