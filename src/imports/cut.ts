/**
 * Cuts a body into parts of one size as it arrives, into one buffer of a part's size (never more held):
 * each full part goes to `onPart`, which stores it before it returns, and says whether to go on. What ended the reading is the answer; the caller
 * judges it. Only reading the body is guarded here: what `onPart` throws (R2 or D1 failing) is
 * thrown on, for the queue's retries.
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

type Read = ReadableStreamReadResult<Uint8Array> | "stalled";

/** The next chunk, or "stalled" when none came within `ms`. */
async function readWithin(reader: ReadableStreamDefaultReader<Uint8Array>, ms: number): Promise<Read> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const stall = new Promise<"stalled">((resolve) => {
    timer = setTimeout(() => resolve("stalled"), ms);
  });
  try {
    return await Promise.race([reader.read(), stall]);
  } finally {
    clearTimeout(timer);
  }
}

export async function cutParts(
  body: ReadableStream<Uint8Array>,
  limits: CutLimits,
  onPart: (part: Uint8Array) => Promise<boolean>,
): Promise<Cut> {
  const reader = body.getReader();
  const stop = async <T extends Cut>(cut: T): Promise<T> => {
    await reader.cancel().catch(() => {});
    return cut;
  };
  const part = new Uint8Array(limits.partBytes);
  let filled = 0;
  let read = 0;
  for (;;) {
    let next: Read;
    try {
      next = await readWithin(reader, limits.stallMs);
    } catch (error) {
      return stop({
        kind: "broken",
        reason: `the connection broke: ${error instanceof Error ? error.message : String(error)}`,
      });
    }
    if (next === "stalled") return stop({ kind: "stalled" });
    if (next.done) return { kind: "end", tail: part.subarray(0, filled), read };
    let chunk = next.value;
    read += chunk.byteLength;
    if (read > limits.maxBytes) return stop({ kind: "too_large" });
    while (chunk.byteLength > 0) {
      const taken = Math.min(limits.partBytes - filled, chunk.byteLength);
      part.set(chunk.subarray(0, taken), filled);
      filled += taken;
      chunk = chunk.subarray(taken);
      if (filled === limits.partBytes) {
        let go: boolean;
        try {
          go = await onPart(part);
        } catch (error) {
          await reader.cancel().catch(() => {});
          throw error;
        }
        // `onPart` has stored the part (R2 read it whole), so the buffer is free to fill again.
        filled = 0;
        if (!go) return stop({ kind: "stopped" });
      }
    }
  }
}
