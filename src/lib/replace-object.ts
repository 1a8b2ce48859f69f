import type { Db } from "./db";

/** A new object to store: its key, bytes (or a stream of a known length) and metadata. */
export type NewObject = { key: string; bytes: Uint8Array | ReadableStream; httpMetadata: R2HTTPMetadata };

/** What a swap found and did: the key the record pointed at before, and the record after. */
export type Swapped<T> = { replaced: string | null; result: T };

/**
 * Points a record at a new R2 object, or at none: the one home of "store the new object, swap the
 * pointer, delete the old object, or roll back". The new object is stored first and the old one
 * deleted after the swap, so the record never points at a missing object. `swap` reads the old
 * pointer and writes the new one atomically (one D1 batch) and answers null when the record is
 * not there; then, or when it throws, the new object is deleted again. What the old pointer names
 * goes through `release`: by default the object under that key; a record whose pointer names more
 * than one object (a prefix, say) says how they go.
 */
export async function replaceObject<T>(
  media: R2Bucket,
  next: NewObject | null,
  swap: (key: string | null) => Promise<Swapped<T> | null>,
  release: (replaced: string) => Promise<unknown> = (replaced) => media.delete(replaced),
): Promise<T | null> {
  if (next) await media.put(next.key, next.bytes, { httpMetadata: next.httpMetadata });
  let swapped: Swapped<T> | null;
  try {
    swapped = await swap(next?.key ?? null);
  } catch (error) {
    if (next) await media.delete(next.key);
    throw error;
  }
  if (!swapped) {
    if (next) await media.delete(next.key);
    return null;
  }
  if (swapped.replaced && swapped.replaced !== next?.key) await release(swapped.replaced);
  return swapped.result;
}

/**
 * A `swap` for `replaceObject` in one D1 batch: `read` selects the key in place `AS replaced`, and
 * `write` points the record at the new key and returns the record (RETURNING); `also` runs after
 * them in the same batch (an event the change records). Null when `write` found no record.
 */
export async function swapInBatch<Row>(
  db: Db,
  read: D1PreparedStatement,
  write: D1PreparedStatement,
  also: D1PreparedStatement[] = [],
): Promise<Swapped<Row> | null> {
  const [before, after] = await db.batch([read, write, ...also]);
  const result = after?.results[0] as Row | undefined;
  if (result === undefined) return null;
  return { replaced: (before?.results[0] as { replaced: string | null } | undefined)?.replaced ?? null, result };
}
