/**
 * Cuts a body into parts of one size as it arrives, into one buffer of a part's size (never more
 * held): each full part goes to `onPart`, which stores it before it returns, and says whether to go
 * on. A byte stream (a fetch's body) is read straight into that buffer (a BYOB reader: no chunk is
 * allocated per read); any other stream's chunks are copied into it. What ended the reading is the
 * answer; the caller judges it. Only reading the body is guarded here: what `onPart` throws (R2 or
 * D1 failing) is thrown on, for the queue's retries.
 */

export type CutLimits = { partBytes: number; stallMs: number; maxBytes: number };

export type Cut =
  /** The body ended: the bytes after the last full part (maybe none), and how many were read. */
  | { kind: "end"; tail: Uint8Array; read: number }
  /** `onPart` said stop. */
  | { kind: "stopped" }
  /** Nothing arrived for `stallMs`. */
  | { kind: "stalled" }
  /** More than `maxBytes` arrived. */
  | { kind: "too_large" }
  /** The body broke (the connection was cut): why. */
  | { kind: "broken"; reason: string };

/**
 * Reads into `into` (at least one byte unless at the end): the view filled, over the buffer to go
 * on with (a BYOB read hands it back as a new ArrayBuffer over the same memory), and whether the
 * stream ended.
 */
type Source = { read: (into: Uint8Array) => Promise<{ view: Uint8Array; done: boolean }>; cancel: () => Promise<void> };

/** A byte stream read straight into the caller's buffer; null when the stream is not one. */
function byobSource(body: ReadableStream<Uint8Array>): Source | null {
  let reader: ReadableStreamBYOBReader;
  try {
    reader = body.getReader({ mode: "byob" });
  } catch {
    return null;
  }
  return {
    read: async (into) => {
      const { done, value } = await reader.read(into);
      // No view back only when the stream was cancelled, which nothing does while a read waits.
      if (!value) throw new Error("the body was cancelled");
      return { view: value, done };
    },
    cancel: () => reader.cancel(),
  };
}

/** Any stream: its chunks copied into the caller's buffer, what does not fit kept for the next read. */
function chunkSource(body: ReadableStream<Uint8Array>): Source {
  const reader = body.getReader();
  let pending: Uint8Array | null = null;
  return {
    read: async (into) => {
      while (!pending || pending.byteLength === 0) {
        const { done, value } = await reader.read();
        if (done) return { view: into.subarray(0, 0), done: true };
        pending = value;
      }
      const taken = Math.min(into.byteLength, pending.byteLength);
      into.set(pending.subarray(0, taken));
      pending = pending.subarray(taken);
      return { view: into.subarray(0, taken), done: false };
    },
    cancel: () => reader.cancel(),
  };
}

type Read = { view: Uint8Array; done: boolean } | "stalled";

/** The next read, or "stalled" when nothing came within `ms`. */
async function readWithin(source: Source, into: Uint8Array, ms: number): Promise<Read> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const stall = new Promise<"stalled">((resolve) => {
    timer = setTimeout(() => resolve("stalled"), ms);
  });
  try {
    return await Promise.race([source.read(into), stall]);
  } finally {
    clearTimeout(timer);
  }
}

export async function cutParts(
  body: ReadableStream<Uint8Array>,
  limits: CutLimits,
  onPart: (part: Uint8Array) => Promise<boolean>,
): Promise<Cut> {
  const source = byobSource(body) ?? chunkSource(body);
  const stop = async <T extends Cut>(cut: T): Promise<T> => {
    await source.cancel().catch(() => {});
    return cut;
  };
  let store = new ArrayBuffer(limits.partBytes);
  let filled = 0;
  let read = 0;
  for (;;) {
    let got: Read;
    try {
      got = await readWithin(source, new Uint8Array(store, filled, limits.partBytes - filled), limits.stallMs);
    } catch (error) {
      return stop({
        kind: "broken",
        reason: `the connection broke: ${error instanceof Error ? error.message : String(error)}`,
      });
    }
    if (got === "stalled") return stop({ kind: "stalled" });
    store = got.view.buffer as ArrayBuffer;
    filled += got.view.byteLength;
    read += got.view.byteLength;
    if (got.done) return { kind: "end", tail: new Uint8Array(store, 0, filled), read };
    if (read > limits.maxBytes) return stop({ kind: "too_large" });
    if (filled < limits.partBytes) continue;
    let go: boolean;
    try {
      go = await onPart(new Uint8Array(store));
    } catch (error) {
      await source.cancel().catch(() => {});
      throw error;
    }
    // `onPart` has stored the part (R2 read it whole), so the buffer is free to fill again.
    filled = 0;
    if (!go) return stop({ kind: "stopped" });
  }
}
