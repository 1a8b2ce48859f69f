import { env } from "cloudflare:workers";
import { importDeps } from "../../src/imports/consumer";
import { IMPORT_LIMITS, type ImportLimits } from "../../src/imports/limits";
import type { ImportDeps } from "../../src/imports/run";
import type { ImportMessage } from "../../src/videos/import-start";
import { bearer, json } from "../helpers";
import { apiWith } from "../support/app";

export const MiB = 1024 * 1024;

/** Small limits for tests: R2's smallest part (Miniflare enforces 5 MiB), a short stall. */
export const TEST_LIMITS: ImportLimits = { ...IMPORT_LIMITS, partBytes: 5 * MiB, stallMs: 300, retrySeconds: 1 };

/** A queue that keeps what is sent to it. */
export function capturingQueue<T>() {
  const sent: T[] = [];
  return { sent, queue: { send: async (body: T) => void sent.push(body) } as unknown as Queue };
}

/** Creates an import of `url` through the route, its message kept (no consumer runs it). */
export async function newImport(key: string, url: string, body: Record<string, unknown> = {}) {
  const { sent, queue } = capturingQueue<ImportMessage>();
  const response = await apiWith(
    { IMPORT_QUEUE: queue },
    "/v1/videos",
    bearer(key, json("POST", { sourceUrl: url, ...body })),
  );
  return { response, sent };
}

export type Hit = { url: string; range: string | null; ifRange: string | null; redirect: string | undefined };

/** A fake origin: a handler by URL; anything else is 404. It records every request. */
export function fakeOrigin(handlers: Record<string, (request: Request, hit: number) => Response | Promise<Response>>) {
  const hits: Hit[] = [];
  const counts = new Map<string, number>();
  const fetcher = (async (input: RequestInfo | URL, init?: RequestInit) => {
    const request = new Request(input, init);
    hits.push({
      url: request.url,
      range: request.headers.get("range"),
      ifRange: request.headers.get("if-range"),
      redirect: init?.redirect,
    });
    const hit = (counts.get(request.url) ?? 0) + 1;
    counts.set(request.url, hit);
    const handler = handlers[request.url];
    if (!handler) return new Response("no such file", { status: 404, statusText: "Not Found" });
    return handler(request, hit);
  }) as typeof fetch;
  return { fetch: fetcher, hits };
}

export function redirect(to: string, status = 302) {
  return () => new Response(null, { status, headers: { location: to } });
}

/**
 * A body of `bytes` in 1 MiB chunks; `breakAt` errors it after that many bytes, `stallAt` stops
 * sending. A byte stream (as a fetch's body is, read by BYOB) unless `bytes: false` (chunks copied).
 */
function bodyOf(
  bytes: Uint8Array,
  cut: { breakAt?: number; stallAt?: number; byteStream?: boolean } = {},
): ReadableStream<Uint8Array> {
  let offset = 0;
  const pull = (controller: {
    enqueue: (chunk: Uint8Array<ArrayBuffer>) => void;
    close: () => void;
    error: (e: unknown) => void;
  }) => {
    if (cut.breakAt !== undefined && offset >= cut.breakAt) {
      controller.error(new Error("connection reset by the fake origin"));
      return;
    }
    if (cut.stallAt !== undefined && offset >= cut.stallAt) return new Promise<void>(() => {});
    if (offset >= bytes.byteLength) {
      controller.close();
      return;
    }
    const end = Math.min(bytes.byteLength, offset + MiB, cut.breakAt ?? Infinity, cut.stallAt ?? Infinity);
    controller.enqueue(bytes.slice(offset, end));
    offset = end;
  };
  if (cut.byteStream === false) return new ReadableStream<Uint8Array>({ pull });
  return new ReadableStream({ type: "bytes", pull }) as ReadableStream<Uint8Array>;
}

export type FileOptions = {
  etag?: string;
  /** Whether Range is honoured (else every answer is the whole file, 200). */
  ranges?: boolean;
  /** The answers (by hit number) whose body breaks after this many bytes. */
  breakAt?: { hits: number[]; at: number };
  stallAt?: number;
  /** Whether to send Content-Length (a chunked answer otherwise). */
  length?: boolean;
  /** Whether the body is a byte stream (default) or a stream of chunks. */
  byteStream?: boolean;
};

/** Serves `bytes` as a file server does: 200 with the whole, or 206 for `Range: bytes=N-` under a matching If-Range. */
export function file(bytes: Uint8Array, options: FileOptions = {}) {
  const { etag = '"v1"', ranges = true, length = true } = options;
  return (request: Request, hit: number) => {
    const breakAt = options.breakAt?.hits.includes(hit) ? options.breakAt.at : undefined;
    const range = /^bytes=(\d+)-$/.exec(request.headers.get("range") ?? "");
    const ifRange = request.headers.get("if-range");
    const headers: Record<string, string> = { etag, "content-type": "video/mp4" };
    if (ranges && range && (ifRange === null || ifRange === etag)) {
      const start = Number(range[1]);
      if (start >= bytes.byteLength) {
        return new Response(null, { status: 416, headers: { "content-range": `bytes */${bytes.byteLength}` } });
      }
      const rest = bytes.subarray(start);
      if (length) headers["content-length"] = String(rest.byteLength);
      headers["content-range"] = `bytes ${start}-${bytes.byteLength - 1}/${bytes.byteLength}`;
      const rebased = breakAt === undefined ? undefined : breakAt - start;
      const body = bodyOf(rest, { breakAt: rebased, stallAt: options.stallAt, byteStream: options.byteStream });
      return new Response(body, { status: 206, headers });
    }
    if (length) headers["content-length"] = String(bytes.byteLength);
    const body = bodyOf(bytes, { breakAt, stallAt: options.stallAt, byteStream: options.byteStream });
    return new Response(body, { status: 200, headers });
  };
}

/** The core's dependencies on the test Worker's bindings, with the fake origin and a kept encodings queue. */
export function testDeps(fetcher: typeof fetch, limits: Partial<ImportLimits> = {}) {
  const encodes = capturingQueue<{ projectId: string; videoId: string }>();
  const deps: ImportDeps = {
    ...importDeps(env, fetcher, { ...TEST_LIMITS, ...limits }),
    encodeQueue: encodes.queue,
  };
  return { deps, encodes: encodes.sent };
}

export type ImportRow = {
  status: string;
  error_code: string | null;
  error_message: string | null;
  import_failures: number;
  import_validator: string | null;
  import_lease_until: string | null;
  upload_r2_id: string | null;
  source_key: string;
  completed_parts: string | null;
};

export function rowOf(id: string): Promise<ImportRow> {
  return env.DB.prepare("SELECT * FROM videos WHERE id = ?")
    .bind(id)
    .first<ImportRow>()
    .then((row) => row as ImportRow);
}

export async function partsOf(id: string): Promise<number[]> {
  const { results } = await env.DB.prepare("SELECT size FROM upload_parts WHERE video_id = ? ORDER BY part_number")
    .bind(id)
    .all<{ size: number }>();
  return results.map((part) => part.size);
}

export async function eventsOf(id: string): Promise<{ type: string; payload: string }[]> {
  const { results } = await env.DB.prepare(
    "SELECT type, payload FROM outbox_events WHERE subject_id = ? ORDER BY created_at",
  )
    .bind(id)
    .all<{ type: string; payload: string }>();
  return results;
}

/** The source object R2 holds for the video, as bytes. */
export async function sourceBytes(key: string): Promise<Uint8Array | null> {
  const object = await env.MEDIA.get(key);
  return object ? new Uint8Array(await object.arrayBuffer()) : null;
}
