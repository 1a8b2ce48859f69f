/** R2's most keys per list and per delete call. */
export const R2_KEYS_PER_CALL = 1000;

/**
 * R2's own error codes that callers branch on (Cloudflare's R2 "Error codes" page; Miniflare's R2
 * throws the same ones locally). Anything else, 10001 InternalError and 10048 BadUpload among them,
 * is R2's failure, not the caller's.
 */
export const R2_ERRORS = {
  /** A part but the last is smaller than R2's minimum. */
  entityTooSmall: 10011,
  /** The multipart upload is gone: completed or aborted. */
  noSuchUpload: 10024,
  /** A part named in a completion was never uploaded, or not with that etag. */
  invalidPart: 10025,
} as const;

/**
 * The R2 error code of something an R2 binding threw: the error's `code` (R2Error), else the number
 * its message ends with, as R2 writes it (`completeMultipartUpload: … (10025)`); null for anything
 * else. Branch on this, never on the message's words: every multipart error names the operation.
 */
export function r2ErrorCode(error: unknown): number | null {
  if (!(error instanceof Error)) return null;
  const code = (error as { code?: unknown }).code;
  if (typeof code === "number" && Number.isInteger(code)) return code;
  const trailing = /\((\d{5,6})\)\s*$/.exec(error.message);
  return trailing ? Number(trailing[1]) : null;
}

/**
 * Deletes up to `limit` objects under `prefix` but `keep`: one list and one delete (what it lists,
 * it deletes: no cursor to keep). `more` says whether anything may remain.
 */
export async function deleteSome(
  media: R2Bucket,
  prefix: string,
  limit: number = R2_KEYS_PER_CALL,
  keep?: string,
): Promise<{ removed: number; more: boolean }> {
  const listed = await media.list({ prefix, limit });
  const keys = listed.objects.map((object) => object.key).filter((key) => key !== keep);
  if (keys.length > 0) await media.delete(keys);
  return { removed: keys.length, more: listed.truncated };
}

/** Deletes every object under `prefix` but `keep`, a thousand at a time. */
export async function deleteAll(media: R2Bucket, prefix: string, keep?: string): Promise<number> {
  let removed = 0;
  for (;;) {
    const step = await deleteSome(media, prefix, R2_KEYS_PER_CALL, keep);
    removed += step.removed;
    if (!step.more) return removed;
  }
}

/** The most bytes one read of a large object asks R2 for (see `rangeBody`). */
export const READ_CHUNK_BYTES = 8 * 1024 * 1024;
/**
 * The bytes the first read of an open-ended range asks R2 for; each read after it asks twice the
 * one before, up to READ_CHUNK_BYTES. ffmpeg opens an open-ended range wherever it seeks and leaves
 * after what it needs, often much less than 8 MiB: each read it leaves early costs the local
 * runtime the whole read. Measured under `npm run dev`, a 60 s 720p video (91 open-ended reads of
 * its source) took the runtime 17.3 CPU-s to encode with 8 MiB reads, and 6.2 CPU-s starting at
 * 1 MiB.
 */
export const FIRST_READ_BYTES = 1024 * 1024;

/**
 * The body of bytes `offset` to `end` (exclusive) of object `key`, whose first bytes `first`
 * already holds (a read of `firstLength` bytes from `offset`), read from R2 in bounded reads each
 * twice as long as the one before, up to READ_CHUNK_BYTES, each made only when the reader wants
 * more and none once it goes away. A reader that opens an open-ended range and leaves after a few
 * bytes (ffmpeg seeking in a source, a player in an MP4) so costs one short read. Measured under
 * `wrangler dev`: one open-ended read of a 570 MB multipart object, left after 100 KB, kept the
 * runtime reading for 1.9 s (0.01 s for an object put whole), while a bounded 1 MB read of it took
 * 11 ms.
 */
export function rangeBody(
  media: R2Bucket,
  key: string,
  first: ReadableStream<Uint8Array>,
  firstLength: number,
  offset: number,
  end: number,
): ReadableStream<Uint8Array> {
  let position = offset;
  let read = firstLength;
  let reader: ReadableStreamDefaultReader<Uint8Array> | null = first.getReader();
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        for (;;) {
          if (!reader) {
            if (position >= end) {
              controller.close();
              return;
            }
            read = Math.min(READ_CHUNK_BYTES, 2 * read);
            const length = Math.min(read, end - position);
            const next = await media.get(key, { range: { offset: position, length } });
            if (!next) {
              controller.error(new Error(`${key} went away while it was read`));
              return;
            }
            reader = next.body.getReader();
          }
          const { done, value } = await reader.read();
          if (done) {
            reader = null;
            continue;
          }
          position += value.byteLength;
          controller.enqueue(value);
          return;
        }
      },
      async cancel(reason) {
        await reader?.cancel(reason);
      },
    },
    { highWaterMark: 0 },
  );
}

/** Aborts an R2 multipart upload; one already completed or aborted is not an error. */
export async function abortMultipartUpload(media: R2Bucket, key: string, uploadId: string): Promise<void> {
  try {
    await media.resumeMultipartUpload(key, uploadId).abort();
  } catch (error) {
    // Already completed or aborted: nothing is left to abort.
    if (r2ErrorCode(error) !== R2_ERRORS.noSuchUpload) throw error;
  }
}
