import { type Answer, bytesAnswer, decide, type FileFacts, factsOf, fileHeaders } from "../http/bytes";
import { ApiError } from "../http/errors";
import type { ByteRange } from "../http/range";
import { parseRange } from "../http/range";

/**
 * The location's cache (the Workers Cache API) in front of R2 for the `/play/` files that never
 * change once stored: segments, frames, the storyboard sprite, the MP4 and the M4A
 * (docs/playback-at-scale.md). A file is kept in slices of SLICE_BYTES, each its own entry keyed on
 * the file's R2 key (which names the video, never the token, so id and token viewers share it) and
 * the slice's number: a Range asks only for the slices it covers, and a viewer's first 1 MiB of a
 * 100 MB MP4 stores 1 MiB, not the file. A slice not cached yet is read from R2 (one bounded read)
 * and stored as the answer streams. Each slice carries what the answer needs of the whole file
 * (size, ETag, date, type), so conditional requests, If-Range and 416 are answered from the first
 * slice read, with no R2 read. Whether the video may be played at all is decided before (its
 * playback state): a deleted or private video's cached bytes are never reached.
 *
 * Measured under `wrangler dev` (docs/playback-at-scale.md): Miniflare keeps a 200 with its
 * headers, answers `match` with a Range as a 206 (but ignores If-Range), refuses to store a 206,
 * and stores nothing marked `no-cache` or `private`; hence whole 200 slices, and every condition
 * decided here.
 */

/** The bytes of one cache entry: a 1 MiB range of a file is one entry when it starts on a slice. */
export const SLICE_BYTES = 1024 * 1024;
/** How long the location keeps a slice: the file never changes, so as long as it likes. */
const SLICE_CACHE_CONTROL = "public, max-age=604800, immutable";
const SIZE = "x-file-size";
const UPLOADED = "x-file-uploaded";
/** Says whether the answer's first slice came from the location's cache (`HIT`) or from R2 (`MISS`). */
export const CACHE_STATUS = "x-cache";

type Slice = { facts: FileFacts; bytes: Uint8Array; cached: boolean };

function sliceKey(key: string, index: number): Request {
  return new Request(`https://edge-cache.invalid/${encodeURI(key)}?slice=${index}`);
}

/** Slice `index` of the file: from the cache, else one R2 read, stored before it is returned. Null: no file. */
async function slice(media: R2Bucket, key: string, index: number, type: string | undefined): Promise<Slice | null> {
  const cache = caches.default;
  const entry = sliceKey(key, index);
  const hit = await cache.match(entry);
  if (hit) {
    const facts: FileFacts = {
      size: Number(hit.headers.get(SIZE)),
      etag: hit.headers.get("etag") ?? "",
      lastModified: Number(hit.headers.get(UPLOADED)),
      type: hit.headers.get("content-type") ?? "application/octet-stream",
    };
    return { facts, bytes: new Uint8Array(await hit.arrayBuffer()), cached: true };
  }
  let object: R2ObjectBody | null;
  try {
    object = await media.get(key, { range: { offset: index * SLICE_BYTES, length: SLICE_BYTES } });
  } catch (error) {
    // R2 refuses a range that starts past the end: the slice does not exist.
    if (index > 0 && (await media.head(key))) return null;
    throw error;
  }
  if (!object) return null;
  const facts = factsOf(object, type);
  const bytes = new Uint8Array(await object.arrayBuffer());
  const headers = new Headers({
    "content-type": facts.type,
    etag: facts.etag,
    "cache-control": SLICE_CACHE_CONTROL,
    [SIZE]: String(facts.size),
    [UPLOADED]: String(facts.lastModified),
  });
  await cache.put(entry, new Response(bytes, { headers }));
  return { facts, bytes, cached: false };
}

/**
 * The file stored in R2 under `key` as an HTTP answer, through the location's cache:
 * `serveR2Object`'s answer, with `x-cache`. Throws `not_found` when there is no such file. Only for
 * a file that never changes once stored: the route that serves it says so by calling this rather
 * than `serveR2Object` (segments, frames, the sprite, the MP4, the M4A, an added audio track's
 * segments, a legacy attempt's files); a file that can be replaced (a custom thumbnail, a caption
 * track) is read from R2 every time.
 */
export async function serveCached(media: R2Bucket, key: string, request: Request, answer: Answer): Promise<Response> {
  const header = request.headers.get("range");
  const asked = parseRange(header, Number.MAX_SAFE_INTEGER);
  // The slice the answer most likely starts in (a suffix or a start past the end needs the size: 0).
  const guess = asked !== null && asked !== "unsatisfiable" && !/^bytes=-/i.test(header?.trim() ?? "");
  const firstIndex = guess ? Math.floor(asked.offset / SLICE_BYTES) : 0;
  let first = await slice(media, key, firstIndex, answer.type);
  if (!first && firstIndex > 0) first = await slice(media, key, 0, answer.type);
  if (!first) throw new ApiError("not_found");
  const { facts } = first;
  const headers = fileHeaders(facts, answer.cacheControl);
  headers.set(CACHE_STATUS, first.cached ? "HIT" : "MISS");
  const range = decide(request, facts, headers);
  if (range instanceof Response) return range;
  if (request.method === "HEAD") return bytesAnswer(request, facts, headers, range, null);
  const wanted: ByteRange = range ?? { offset: 0, length: facts.size };
  return bytesAnswer(
    request,
    facts,
    headers,
    range,
    fixedLength(sliceStream(media, key, answer.type, wanted, first, firstIndex), wanted.length),
  );
}

/**
 * A stream the runtime knows the length of: a plain ReadableStream body loses its Content-Length
 * (the answer goes out chunked), which players and `fetch` read as an unknown size.
 */
function fixedLength(stream: ReadableStream<Uint8Array>, length: number): ReadableStream<Uint8Array> {
  const fixed = new FixedLengthStream(length);
  // A reader that goes away ends the pipe; that is no error of the Worker's.
  stream.pipeTo(fixed.writable).catch(() => {});
  return fixed.readable;
}

/** The bytes of `range`, slice by slice, each read from the cache or R2 only when the reader wants it. */
function sliceStream(
  media: R2Bucket,
  key: string,
  type: string | undefined,
  range: ByteRange,
  known: Slice,
  knownIndex: number,
): ReadableStream<Uint8Array> {
  const end = range.offset + range.length;
  let position = range.offset;
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        if (position >= end) {
          controller.close();
          return;
        }
        const index = Math.floor(position / SLICE_BYTES);
        const current = index === knownIndex ? known : await slice(media, key, index, type);
        if (!current || current.facts.etag !== known.facts.etag) {
          controller.error(new Error(`${key} changed or went away while it was read`));
          return;
        }
        const from = position - index * SLICE_BYTES;
        const to = Math.min(current.bytes.byteLength, end - index * SLICE_BYTES);
        if (to <= from) {
          controller.error(new Error(`${key}: slice ${index} is shorter than the file's size says`));
          return;
        }
        controller.enqueue(current.bytes.subarray(from, to));
        position = index * SLICE_BYTES + to;
      },
    },
    { highWaterMark: 0 },
  );
}
