import type { Timer } from "../lib/time";
import type { Behind, PaceWindow } from "./pace";

/**
 * Cuts a body into parts of one size as it arrives, into one buffer of a part's size (never more
 * held): each full part goes to `onPart`, which stores it before it returns. A byte stream (a
 * fetch's body) is read straight into that buffer (a BYOB reader: no chunk is allocated per read);
 * any other stream's chunks are copied into it.
 *
 * The cut keeps its own clock (docs/imports.md, "An import's own clock"): every read races the
 * moment the origin falls behind its pace, the moment the run must look after its lease, and the
 * run's stop signal, so a body that sends nothing, or a byte a second, ends on time however far its
 * part is from full. What ended the reading is the answer; the caller judges it. What `onPart` or
 * the upkeep throws (R2 or D1 failing) is thrown on, the body cancelled first.
 */

export type CutLimits = { partBytes: number; maxBytes: number };

/** What a full part's storing says: go on, stop here for now (the run's part limit), or the run lost its hold. */
export type PartVerdict = "go" | "pause" | "lost";

export type CutControl = {
  now: () => number;
  timer: Timer;
  /** The origin's pace, from the moment the body was asked for. */
  pace: PaceWindow;
  /** The run's slice: past it, the cut stops after the next bytes, keeping what it holds of its part. */
  until: number;
  /** The run stops: the body is cancelled at once (its connection closed). */
  signal?: AbortSignal | undefined;
  /** Bytes a previous run kept of the part it had begun: the cut starts its first part with them. */
  head?: Uint8Array | undefined;
  /** What keeps the run's hold (its lease) while no part is stored: when it is due, and doing it (false: lost). */
  upkeep?: { due: () => number; run: () => Promise<boolean> } | undefined;
  onPart: (part: Uint8Array) => Promise<PartVerdict>;
};

export type Cut =
  /** The body ended: the bytes after the last full part (maybe none), and how many this cut read. */
  | { kind: "end"; tail: Uint8Array; read: number }
  /** The slice is over or the part limit reached: what is held of the part begun (maybe nothing). */
  | { kind: "paused"; partial: Uint8Array }
  /** The run lost its hold (the video deleted, finished, or taken over). */
  | { kind: "lost" }
  /** The run was told to stop. */
  | { kind: "stopped" }
  /** The origin fell behind its pace. */
  | { kind: "behind"; behind: Behind }
  /** More than `maxBytes` arrived. */
  | { kind: "too_large" }
  /** The body broke (the connection was cut). */
  | { kind: "broken" };

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
      // No view back only when the stream was cancelled, which only the cut's own stop does.
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

type Read = { kind: "read"; view: Uint8Array; done: boolean } | { kind: "error" };

/** Resolves when `signal` aborts (never, without one). */
function stopped(signal: AbortSignal | undefined): Promise<"stop"> {
  return new Promise((resolve) => {
    if (signal?.aborted) resolve("stop");
    else signal?.addEventListener("abort", () => resolve("stop"), { once: true });
  });
}

export async function cutParts(body: ReadableStream<Uint8Array>, limits: CutLimits, control: CutControl): Promise<Cut> {
  const { now, pace } = control;
  const source = byobSource(body) ?? chunkSource(body);
  const stop = async <T extends Cut>(cut: T): Promise<T> => {
    await source.cancel().catch(() => {});
    return cut;
  };
  /** Runs the run's own work (a part, the lease): the origin is not behind for the time it takes. */
  const busy = async <T>(work: () => Promise<T>): Promise<T> => {
    const from = now();
    try {
      return await work();
    } catch (error) {
      await source.cancel().catch(() => {});
      throw error;
    } finally {
      pace.pause(now() - from);
    }
  };
  const stop$ = stopped(control.signal);
  let store = new ArrayBuffer(limits.partBytes);
  let filled = 0;
  if (control.head && control.head.byteLength > 0) {
    new Uint8Array(store).set(control.head);
    filled = control.head.byteLength;
  }
  let read = 0;
  // A read waits across wake-ups (the lease's upkeep): it is asked once and raced again.
  let pending: Promise<Read> | null = null;
  for (;;) {
    pending ??= source.read(new Uint8Array(store, filled, limits.partBytes - filled)).then(
      ({ view, done }): Read => ({ kind: "read", view, done }),
      (): Read => ({ kind: "error" }),
    );
    const wakeAt = Math.min(pace.deadline(), control.upkeep?.due() ?? Number.POSITIVE_INFINITY);
    const wake = control.timer(Math.max(0, wakeAt - now()));
    const got = await Promise.race([pending, wake.fired.then(() => "wake" as const), stop$]);
    wake.cancel();
    if (got === "stop") return stop({ kind: "stopped" });
    if (got === "wake") {
      const behind = pace.behind(now());
      if (behind) return stop({ kind: "behind", behind });
      const upkeep = control.upkeep;
      if (upkeep && now() >= upkeep.due() && !(await busy(upkeep.run))) return stop({ kind: "lost" });
      continue;
    }
    pending = null;
    if (got.kind === "error") return stop({ kind: "broken" });
    store = got.view.buffer as ArrayBuffer;
    filled += got.view.byteLength;
    read += got.view.byteLength;
    pace.arrived(now(), got.view.byteLength);
    if (got.done) return { kind: "end", tail: new Uint8Array(store, 0, filled), read };
    const behind = pace.behind(now());
    if (behind) return stop({ kind: "behind", behind });
    if (read > limits.maxBytes) return stop({ kind: "too_large" });
    if (filled === limits.partBytes) {
      const verdict = await busy(() => control.onPart(new Uint8Array(store)));
      // `onPart` has stored the part (R2 read it whole), so the buffer is free to fill again.
      filled = 0;
      if (verdict === "lost") return stop({ kind: "lost" });
      if (verdict === "pause") return stop({ kind: "paused", partial: new Uint8Array(0) });
    }
    if (now() >= control.until) return stop({ kind: "paused", partial: new Uint8Array(store, 0, filled) });
  }
}
