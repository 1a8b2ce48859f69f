import { MAX_PATCH_BYTES } from "./protocol";
import type { UploadStore } from "./store";

/** How the object follows a body being received: a way to stop it, and whether bytes arrive. */
export type Reception = {
  /** Called with the way to stop this body (a newer request means its client gave up on it), then null. */
  interruptWith(stop: (() => void) | null): void;
  /** Called with true once bytes arrive (even ones not yet held), then false when the body ends. */
  receiving(on: boolean): void;
};

/**
 * Takes a PATCH body: fills parts of `partSize` from the tail and the stream, uploading each whole
 * part (one at a time, while the stream goes on) and committing it with the offset; then keeps
 * what is left as the new tail, and marks the upload `completing` once every byte is held. Bytes
 * past `Upload-Length`, or past 64 MiB in this request, are not kept: returns true when there were
 * some. A body cut off ends the loop as its end would: every byte that arrived is kept.
 */
export async function receiveBody(
  store: UploadStore,
  body: ReadableStream<Uint8Array>,
  reception: Reception,
): Promise<boolean> {
  const start = store.current();
  const length = start.length as number;
  const partSize = start.partSize;
  const limit = Math.min(MAX_PATCH_BYTES, length - start.offset);
  const tail = store.takeTail();
  let base = start.offset - tail.byteLength;
  let buffer = new Uint8Array(Math.min(partSize, length - base));
  buffer.set(tail);
  let filled = tail.byteLength;
  let stored = tail.byteLength;
  let received = 0;
  let tooLarge = false;
  let uploading: Promise<void> = Promise.resolve();
  const reader = body.getReader();
  reception.interruptWith(() => {
    reader.cancel().catch(() => {});
  });
  try {
    for (;;) {
      let chunk: Uint8Array;
      try {
        const next = await reader.read();
        if (next.done) break;
        chunk = next.value;
      } catch {
        // The client went away mid-body: keep what arrived.
        break;
      }
      if (received + chunk.byteLength > limit) {
        tooLarge = true;
        chunk = chunk.subarray(0, limit - received);
      }
      received += chunk.byteLength;
      if (received > 0) reception.receiving(true);
      while (chunk.byteLength > 0 && buffer.byteLength > 0) {
        const n = Math.min(buffer.byteLength - filled, chunk.byteLength);
        buffer.set(chunk.subarray(0, n), filled);
        filled += n;
        chunk = chunk.subarray(n);
        if (filled < buffer.byteLength) continue;
        // A whole part: upload it while the next one fills, at most one in flight.
        await uploading;
        uploading = store.storePart(base / partSize + 1, buffer, base + buffer.byteLength);
        uploading.catch(() => {});
        base += buffer.byteLength;
        buffer = new Uint8Array(Math.min(partSize, length - base));
        filled = 0;
        stored = 0;
      }
      if (tooLarge) {
        await reader.cancel().catch(() => {});
        break;
      }
    }
    await uploading;
  } finally {
    reception.interruptWith(null);
    reception.receiving(false);
  }
  store.settleTail(buffer.subarray(0, filled), filled - stored);
  if (store.current().offset === length) store.save({ ...store.current(), phase: "completing" });
  return tooLarge;
}
