import { Hono } from "hono";
import { contentType, isOutputPath } from "../../encoder/protocol.mjs";
import { httpDate, ifRangeHolds, notModified } from "../http/conditional";
import type { AppEnv } from "../http/context";
import { ApiError } from "../http/errors";
import { encodeOutputKey } from "../lib/storage-keys";
import { thumbnailKeyOf } from "../thumbnails/urls";
import { parseRange } from "./range";
import { playableVideo } from "./subject";
import { PLAY_PATH } from "./urls";

/** Every `/play/` answer, errors included: any origin may play (contract section 12). */
const CORS = {
  "access-control-allow-origin": "*",
  "access-control-expose-headers": "Content-Length, Content-Range, Accept-Ranges, ETag",
};

/** Playback files may be kept by a CDN, but revalidated at every use. */
const PLAYBACK_CACHE = "no-cache";
/** A video's thumbnail under /play/ is the video's or a token holder's: no shared cache keeps it. */
const THUMBNAIL_CACHE = "private";

/**
 * Playback, straight from R2: the master playlist, the variant playlists and their segments, the
 * MP4 (with byte ranges) and the current thumbnail of a ready video, under its id or a token. One
 * D1 read (the video) and one R2 read per request; `no-cache` lets a CDN keep the bytes but
 * revalidate every use, so a video made private or deleted stops playing at once (README,
 * "Encoding and playback").
 */
export const playbackRoutes = new Hono<AppEnv>()
  .use(`${PLAY_PATH}/*`, async (c, next) => {
    await next();
    for (const [name, value] of Object.entries(CORS)) c.res.headers.set(name, value);
  })
  .options(`${PLAY_PATH}/*`, (c) =>
    c.body(null, 204, {
      "access-control-allow-methods": "GET, HEAD, OPTIONS",
      "access-control-allow-headers": "Range, If-Range, If-None-Match, If-Modified-Since",
      "access-control-max-age": "86400",
    }),
  )
  // The video's current thumbnail (its custom image, else the poster frame), with its own type: how
  // a token holder sees a private video's picture, and the embed page's poster (contract section 12).
  .on(["GET", "HEAD"], `${PLAY_PATH}/:subject/thumbnail`, async (c) => {
    const row = await playableVideo(c, c.req.param("subject"), { fresh: true });
    return serveObject(c.env.MEDIA, thumbnailKeyOf(row), c.req.raw, { cacheControl: THUMBNAIL_CACHE });
  })
  .on(["GET", "HEAD"], `${PLAY_PATH}/:subject/*`, async (c) => {
    const subject = c.req.param("subject");
    const path = new URL(c.req.url).pathname.slice(`${PLAY_PATH}/${subject}/`.length);
    // The video first (a private one's id URLs answer 403 before the other checks), then the file.
    const row = await playableVideo(c, subject, { fresh: path === "master.m3u8" });
    if (!isOutputPath(path) || !/\.(m3u8|ts|mp4|jpg)$/.test(path)) throw new ApiError("not_found");
    if (path === "video.mp4" && row.has_mp4 !== 1) throw new ApiError("not_found");
    const key = encodeOutputKey(row.project_id, row.id, row.output_attempt as number, path);
    return serveObject(c.env.MEDIA, key, c.req.raw, { type: contentType(path), cacheControl: PLAYBACK_CACHE });
  });

/**
 * One R2 object as an HTTP answer: `Accept-Ranges`, a single byte range as `206` (`416` with a
 * Content-Range naming the size, past the end, however large its numbers), `ETag` and
 * `Last-Modified` with their conditional requests (304, 412), and `If-Range` (a Range whose
 * If-Range does not name this object, or is malformed, gets the whole file). The Content-Type is
 * `answer.type`, else the object's own. One R2 round trip, but for a range past the end (which
 * needs the size first) and a Range whose If-Range fails (which needs the whole file).
 */
async function serveObject(
  media: R2Bucket,
  key: string,
  request: Request,
  answer: { type?: string; cacheControl: string },
): Promise<Response> {
  const rangeHeader = request.headers.get("range");
  const wanted = rangeHeader ? requestedRange(rangeHeader) : undefined;
  let object: R2ObjectBody | null;
  /** Whether only part of the file was read. */
  let partial = wanted !== undefined;
  try {
    object = await media.get(key, wanted ? { range: wanted } : {});
  } catch (error) {
    if (!wanted) throw error;
    // R2 refuses a range it cannot serve as asked (past the end, say): ask again knowing the size.
    const head = await media.head(key);
    if (!head) throw new ApiError("not_found");
    const range = ifRangeHolds(request.headers, validatorsOf(head)) ? parseRange(rangeHeader, head.size) : null;
    if (range === "unsatisfiable") throw unsatisfiable(head.size);
    partial = range !== null;
    object = await media.get(key, range ? { range } : {});
  }
  if (!object) throw new ApiError("not_found");
  const headers = new Headers({
    "content-type": answer.type ?? object.httpMetadata?.contentType ?? "application/octet-stream",
    "accept-ranges": "bytes",
    "cache-control": answer.cacheControl,
    etag: object.httpEtag,
    "last-modified": httpDate(object.uploaded),
  });
  const conditional = await notModified(request.headers, object, headers);
  if (conditional) return conditional;
  const honoured = rangeHeader !== null && ifRangeHolds(request.headers, validatorsOf(object));
  if (!honoured && partial) {
    // Only part of the file was read, and the whole is to be sent.
    await object.body.cancel();
    object = await media.get(key);
    if (!object) throw new ApiError("not_found");
  }
  const range = honoured ? parseRange(rangeHeader, object.size) : null;
  if (range === "unsatisfiable") {
    await object.body.cancel();
    throw unsatisfiable(object.size);
  }
  const body = request.method === "HEAD" ? null : object.body;
  if (request.method === "HEAD") await object.body.cancel();
  if (!range) {
    headers.set("content-length", String(object.size));
    return new Response(body, { headers });
  }
  headers.set("content-length", String(range.length));
  headers.set("content-range", `bytes ${range.offset}-${range.offset + range.length - 1}/${object.size}`);
  return new Response(body, { status: 206, headers });
}

function validatorsOf(object: R2Object) {
  return { etag: object.httpEtag, lastModified: object.uploaded.getTime() };
}

/**
 * The range to ask R2 for before the size is known (R2 clamps the end itself); `undefined` for the
 * whole file, as `parseRange` reads the header, and for a start past any file's end (the size is
 * needed to answer 416).
 */
function requestedRange(header: string): R2Range | undefined {
  const parsed = parseRange(header, Number.MAX_SAFE_INTEGER);
  if (parsed === null || parsed === "unsatisfiable") return undefined;
  const suffix = /^bytes=-(\d+)$/i.exec(header.trim());
  if (suffix) return { suffix: Math.min(Number(suffix[1]), Number.MAX_SAFE_INTEGER) };
  const bounded = /^bytes=\d+-\d+$/i.test(header.trim());
  return bounded ? { offset: parsed.offset, length: parsed.length } : { offset: parsed.offset };
}

function unsatisfiable(size: number): ApiError {
  return new ApiError("range_not_satisfiable", { headers: { "content-range": `bytes */${size}` } });
}
