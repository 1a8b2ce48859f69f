import { FIRST_READ_BYTES, READ_CHUNK_BYTES, rangeBody } from "../lib/r2";
import { httpDate, ifRangeHolds, preconditionStatus, type Validators } from "./conditional";
import { ApiError } from "./errors";
import { type ByteRange, parseRange } from "./range";

/**
 * Byte serving, once for every route that answers a file (playback, thumbnails, the encoder's
 * reads, the edge cache): `Accept-Ranges`, one byte range as `206` (`416` with a Content-Range
 * naming the size past the end, however large its numbers), `ETag` and `Last-Modified` with their
 * conditional requests (304, 412) and `If-Range` (a Range whose If-Range does not name this file,
 * or is malformed, gets the whole file), `HEAD` with the headers a `GET` would have. RFC 9110 §13–14.
 */

/**
 * How a file is answered besides its bytes: its Content-Type and Cache-Control (an R2 object's own,
 * as stored with it, when absent).
 */
export type Answer = {
  type?: string;
  cacheControl?: string;
  /** `false`: the file is always answered whole (no `Accept-Ranges`; a Range is ignored, as RFC 9110 allows). */
  ranges?: false;
};

/** What is known of a file before its bytes are sent. */
export type FileFacts = Validators & { size: number; type: string };

/**
 * The headers every answer about a file has (200, 206 and 304 alike): its type, `Accept-Ranges`,
 * its validators and the answer's Cache-Control.
 */
export function fileHeaders(facts: FileFacts, cacheControl?: string, ranges = true): Headers {
  const headers = new Headers({ "content-type": facts.type, etag: facts.etag });
  if (ranges) headers.set("accept-ranges", "bytes");
  if (facts.lastModified !== undefined) headers.set("last-modified", httpDate(facts.lastModified));
  if (cacheControl !== undefined) headers.set("cache-control", cacheControl);
  return headers;
}

/**
 * What a request asks of a file: `304` (a Response), `412` (thrown), else the range to send
 * (`null` for the whole file); `416` thrown for a range past the end.
 */
export function decide(request: Request, facts: FileFacts, headers: Headers): Response | ByteRange | null {
  const status = preconditionStatus(request.headers, facts);
  if (status === 412) throw new ApiError("precondition_failed");
  if (status === 304) return new Response(null, { status, headers });
  const header = headers.has("accept-ranges") ? request.headers.get("range") : null;
  const range = header !== null && ifRangeHolds(request.headers, facts) ? parseRange(header, facts.size) : null;
  if (range === "unsatisfiable") throw unsatisfiable(facts.size);
  return range;
}

/** The 200 or 206 answer with `body` (the whole file, or `range` of it); none for a HEAD. */
export function bytesAnswer(
  request: Request,
  facts: FileFacts,
  headers: Headers,
  range: ByteRange | null,
  body: BodyInit | null,
): Response {
  headers.set("content-length", String(range ? range.length : facts.size));
  if (range) headers.set("content-range", `bytes ${range.offset}-${range.offset + range.length - 1}/${facts.size}`);
  return new Response(request.method === "HEAD" ? null : body, { status: range ? 206 : 200, headers });
}

/** Bytes in memory (a text made for this request, a file read whole) as an HTTP answer. */
export function serveBuffer(request: Request, bytes: Uint8Array, facts: Omit<FileFacts, "size">, answer: Answer) {
  const whole: FileFacts = { ...facts, size: bytes.byteLength };
  const headers = fileHeaders(whole, answer.cacheControl);
  const range = decide(request, whole, headers);
  if (range instanceof Response) return range;
  const body = range ? bytes.slice(range.offset, range.offset + range.length) : bytes;
  return bytesAnswer(request, whole, headers, range, body);
}

/** What an R2 object's metadata says of it, as a file to answer. */
export function factsOf(object: R2Object, type?: string): FileFacts {
  return {
    size: object.size,
    etag: object.httpEtag,
    lastModified: object.uploaded.getTime(),
    type: type ?? object.httpMetadata?.contentType ?? "application/octet-stream",
  };
}

/**
 * One R2 object as an HTTP answer. One R2 round trip, but for a range past the end (which needs
 * the size first) and a Range whose If-Range fails (which needs the whole file). A range is read
 * in bounded pieces (`rangeBody`): a reader that opens `bytes=0-` of a large file and leaves after
 * a few bytes (ffmpeg seeking, a player in an MP4) costs one bounded read.
 */
export async function serveR2Object(media: R2Bucket, key: string, request: Request, answer: Answer) {
  const header = answer.ranges === false ? null : request.headers.get("range");
  const wanted = header ? firstRead(header) : undefined;
  let object: R2ObjectBody | null;
  try {
    object = await media.get(key, wanted ? { range: wanted } : {});
  } catch (error) {
    if (!wanted) throw error;
    // R2 refuses a range it cannot serve as asked (past the end, say): ask again knowing the size.
    const head = await media.head(key);
    if (!head) throw new ApiError("not_found");
    const facts = factsOf(head, answer.type);
    const cacheControl = answer.cacheControl ?? head.httpMetadata?.cacheControl;
    const range = decide(request, facts, fileHeaders(facts, cacheControl, answer.ranges));
    if (range instanceof Response) return range;
    object = await media.get(key, range ? { range } : {});
    if (!object) throw new ApiError("not_found");
    return bytesAnswer(request, facts, fileHeaders(facts, cacheControl, answer.ranges), range, object.body);
  }
  if (!object) throw new ApiError("not_found");
  const facts = factsOf(object, answer.type);
  const headers = fileHeaders(facts, answer.cacheControl ?? object.httpMetadata?.cacheControl, answer.ranges);
  let range: Response | ByteRange | null;
  try {
    range = decide(request, facts, headers);
  } catch (error) {
    await object.body.cancel();
    throw error;
  }
  if (range instanceof Response || request.method === "HEAD") await object.body.cancel();
  if (range instanceof Response) return range;
  if (request.method === "HEAD") return bytesAnswer(request, facts, headers, range, null);
  if (wanted && !range) {
    // Only part of the file was read, and the whole is to be sent (its If-Range failed).
    await object.body.cancel();
    object = await media.get(key);
    if (!object) throw new ApiError("not_found");
  }
  const firstLength =
    wanted && "length" in wanted && wanted.length !== undefined ? wanted.length : (range?.length ?? 0);
  const body = range
    ? rangeBody(media, key, object.body, firstLength, range.offset, range.offset + range.length)
    : object.body;
  return bytesAnswer(request, facts, headers, range, body);
}

/**
 * The first read of a range before the size is known (R2 clamps the end itself), of a range that
 * starts at a known offset: at most READ_CHUNK_BYTES of a bounded range, FIRST_READ_BYTES of an
 * open-ended one (`serveR2Object` reads the rest as it is wanted, in growing reads); `undefined`
 * for the whole file, as `parseRange` reads the header, and for a start past any file's end (the
 * size is needed to answer 416).
 */
function firstRead(header: string): R2Range | undefined {
  const parsed = parseRange(header, Number.MAX_SAFE_INTEGER);
  if (parsed === null || parsed === "unsatisfiable") return undefined;
  const suffix = /^bytes=-(\d+)$/i.exec(header.trim());
  if (suffix) return { suffix: Math.min(Number(suffix[1]), Number.MAX_SAFE_INTEGER) };
  const bounded = /^bytes=\d+-\d+$/i.test(header.trim());
  const length = bounded ? Math.min(parsed.length, READ_CHUNK_BYTES) : FIRST_READ_BYTES;
  return { offset: parsed.offset, length };
}

export function unsatisfiable(size: number): ApiError {
  return new ApiError("range_not_satisfiable", { headers: { "content-range": `bytes */${size}` } });
}
