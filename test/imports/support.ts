import { env } from "cloudflare:workers";
import { expect } from "vitest";
import { importDeps } from "../../src/imports/deps";
import { IMPORT_LIMITS, type ImportLimits } from "../../src/imports/limits";
import { NOTHING_KEPT, type Resume, type ResumeStore } from "../../src/imports/resume";
import type { ImportDeps } from "../../src/imports/run";
import type { Timer } from "../../src/lib/time";
import type { ImportMessage } from "../../src/queues/imports";
import { bearer, json, newWorkspace } from "../helpers";
import { apiWith } from "../support/app";

export const MiB = 1024 * 1024;

/**
 * Small limits for tests: R2's smallest part (Miniflare enforces 5 MiB), a short pace window (300 ms;
 * the real 60 s is tested on a virtual clock).
 */
export const TEST_LIMITS: ImportLimits = {
  ...IMPORT_LIMITS,
  partBytes: 5 * MiB,
  pace: { windowMs: 300, minBytes: 64 * 1024 },
  retrySeconds: 1,
};

/** What a run leaves the next one, kept in memory (the import's object keeps it in SQLite). */
export function memoryResume(): ResumeStore & { kept: Resume } {
  const store = {
    kept: NOTHING_KEPT,
    load: () => store.kept,
    save: (resume: Resume) => {
      const head = resume.head && { start: resume.head.start, bytes: resume.head.bytes.slice() };
      store.kept = { head, unresumable: resume.unresumable };
    },
  };
  return store;
}

/**
 * Time that passes only as it is waited for: whenever something waits, the clock jumps to the
 * earliest wake-up (after a few real milliseconds, so what that wake-up set off has settled). A run's
 * 60 s pace, 5-minute slice and 3-minute lease are tested at their real numbers in milliseconds.
 */
export function virtualClock(start = Date.now()) {
  let now = start;
  let sleepers: { at: number; wake: () => void }[] = [];
  let stepping = false;
  const step = () => {
    stepping = false;
    const next = sleepers.reduce<(typeof sleepers)[number] | undefined>(
      (a, b) => (a && a.at <= b.at ? a : b),
      undefined,
    );
    if (!next) return;
    sleepers = sleepers.filter((sleeper) => sleeper !== next);
    now = Math.max(now, next.at);
    next.wake();
    schedule();
  };
  const schedule = () => {
    if (stepping) return;
    stepping = true;
    setTimeout(step, 5);
  };
  const timer: Timer = (ms) => {
    let wake = () => {};
    const fired = new Promise<void>((resolve) => {
      wake = resolve;
    });
    const sleeper = { at: now + ms, wake };
    sleepers.push(sleeper);
    schedule();
    const cancel = () => {
      sleepers = sleepers.filter((other) => other !== sleeper);
    };
    return { fired, cancel };
  };
  return { now: () => now, timer, sleep: (ms: number) => timer(ms).fired, elapsed: () => now - start };
}

export type VirtualClock = ReturnType<typeof virtualClock>;

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

/** An origin that sends `bytes` every `everyMs` (on a virtual clock's `sleep`), as a slow server does. */
export type Trickle = { bytes: number; everyMs: number; sleep: (ms: number) => Promise<void> };

type BodyCut = { breakAt?: number; stallAt?: number; byteStream?: boolean; trickle?: Trickle; onCancel?: () => void };

/**
 * A body of `bytes` in 1 MiB chunks (or as `trickle` says); `breakAt` errors it after that many
 * bytes, `stallAt` stops sending; `onCancel` hears the reader cancel it (the connection closed). A
 * byte stream (as a fetch's body is, read by BYOB) unless `byteStream: false` (chunks copied).
 */
function bodyOf(bytes: Uint8Array, cut: BodyCut = {}): ReadableStream<Uint8Array> {
  let offset = 0;
  const pull = async (controller: {
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
    if (cut.trickle) await cut.trickle.sleep(cut.trickle.everyMs);
    const chunk = cut.trickle?.bytes ?? MiB;
    const end = Math.min(bytes.byteLength, offset + chunk, cut.breakAt ?? Infinity, cut.stallAt ?? Infinity);
    controller.enqueue(bytes.slice(offset, end));
    offset = end;
  };
  const cancel = () => cut.onCancel?.();
  if (cut.byteStream === false) return new ReadableStream<Uint8Array>({ pull, cancel });
  return new ReadableStream({ type: "bytes", pull, cancel }) as ReadableStream<Uint8Array>;
}

/** `bytes` compressed as `format`, as an origin that compresses its answers sends them. */
export async function compressed(bytes: Uint8Array, format: "gzip" | "deflate"): Promise<Uint8Array> {
  const stream = new Blob([bytes.slice()]).stream().pipeThrough(new CompressionStream(format));
  return new Uint8Array(await new Response(stream).arrayBuffer());
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
  trickle?: Trickle;
  onCancel?: () => void;
  /**
   * The answers (by hit number, all if absent) sent with this `Content-Encoding`. As measured of the
   * Workers runtime's fetch (docs/imports.md): gzip and br come decoded with the encoded
   * Content-Length, deflate and anything else as sent. A Range is answered with a range of the
   * encoded bytes, as HTTP says.
   */
  encoding?: { coding: "gzip" | "br" | "deflate" | "zstd"; hits?: number[] };
};

/** Serves `bytes` as a file server does: 200 with the whole, or 206 for `Range: bytes=N-` under a matching If-Range. */
export function file(bytes: Uint8Array, options: FileOptions = {}) {
  const { etag = '"v1"', ranges = true, length = true } = options;
  return async (request: Request, hit: number) => {
    const breakAt = options.breakAt?.hits.includes(hit) ? options.breakAt.at : undefined;
    const range = /^bytes=(\d+)-$/.exec(request.headers.get("range") ?? "");
    const ifRange = request.headers.get("if-range");
    const headers: Record<string, string> = { etag, "content-type": "video/mp4" };
    const cut = {
      stallAt: options.stallAt,
      byteStream: options.byteStream,
      trickle: options.trickle,
      onCancel: options.onCancel,
    };
    const coding = options.encoding && (options.encoding.hits?.includes(hit) ?? true) ? options.encoding.coding : null;
    if (coding) {
      headers["content-encoding"] = coding;
      const encoded = await compressed(bytes, coding === "deflate" ? "deflate" : "gzip");
      const sent = coding === "gzip" || coding === "br" ? bytes : encoded;
      if (ranges && range) {
        const start = Number(range[1]);
        headers["content-range"] = `bytes ${start}-${encoded.byteLength - 1}/${encoded.byteLength}`;
        return new Response(bodyOf(encoded.subarray(start), cut), { status: 206, headers });
      }
      if (length) headers["content-length"] = String(encoded.byteLength);
      return new Response(bodyOf(sent, { ...cut, breakAt }), { status: 200, headers });
    }
    if (ranges && range && (ifRange === null || ifRange === etag)) {
      const start = Number(range[1]);
      if (start >= bytes.byteLength) {
        return new Response(null, { status: 416, headers: { "content-range": `bytes */${bytes.byteLength}` } });
      }
      const rest = bytes.subarray(start);
      if (length) headers["content-length"] = String(rest.byteLength);
      headers["content-range"] = `bytes ${start}-${bytes.byteLength - 1}/${bytes.byteLength}`;
      const rebased = breakAt === undefined ? undefined : breakAt - start;
      return new Response(bodyOf(rest, { ...cut, breakAt: rebased }), { status: 206, headers });
    }
    if (length) headers["content-length"] = String(bytes.byteLength);
    return new Response(bodyOf(bytes, { ...cut, breakAt }), { status: 200, headers });
  };
}

/**
 * A run's dependencies on the test Worker's bindings, with the fake origin, a kept encodings queue
 * and what one run leaves the next kept in memory (shared by every run of these deps); a virtual
 * clock's time when one is given.
 */
export function testDeps(
  fetcher: typeof fetch,
  limits: Partial<ImportLimits> = {},
  options: { clock?: VirtualClock; signal?: AbortSignal } = {},
) {
  const encodes = capturingQueue<{ projectId: string; videoId: string }>();
  const resume = memoryResume();
  const deps: ImportDeps = {
    ...importDeps(env, {
      resume,
      fetch: fetcher,
      limits: { ...TEST_LIMITS, ...limits },
      clock: options.clock?.now,
      timer: options.clock?.timer,
      signal: options.signal,
    }),
    encodeQueue: encodes.queue,
  };
  return { deps, encodes: encodes.sent, resume };
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

export const URL_A = "https://media.example.com/a.mp4";

/** A new import of `url` in a new workspace: the video's id. */
export async function importOf(url = URL_A, mode: "live" | "test" = "live") {
  const { key } = await newWorkspace({ mode });
  const { response, sent } = await newImport(key, url);
  expect(response.status).toBe(201);
  const { video } = (await response.json()) as { video: { id: string } };
  expect(sent).toEqual([{ projectId: expect.any(String), videoId: video.id }]);
  return { key, id: video.id };
}

export function expectSameBytes(actual: Uint8Array | null, expected: Uint8Array) {
  expect(actual).not.toBeNull();
  expect(actual?.byteLength).toBe(expected.byteLength);
  // Compare as one buffer (a per-element diff of 12 MiB would be slow to print).
  expect(Buffer.compare(Buffer.from(actual as Uint8Array), Buffer.from(expected))).toBe(0);
}

export async function expectFailed(id: string, words: string | RegExp) {
  const row = await rowOf(id);
  expect(row.status).toBe("errored");
  expect(row.error_code).toBe("import_failed");
  expect(row.error_message).toMatch(words);
  const events = await eventsOf(id);
  expect(events.map((event) => event.type)).toEqual(["video.errored"]);
  const payload = JSON.parse(events[0]?.payload ?? "{}") as { data: { status: string; error: { code: string } } };
  expect(payload.data.status).toBe("errored");
  expect(payload.data.error.code).toBe("import_failed");
  return row;
}
