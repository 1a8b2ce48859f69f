import { type Context, Hono } from "hono";
import { contentType, isOutputPath } from "../../encoder/protocol.mjs";
import { captionFile, captionTrackFile } from "../captions/files";
import { withSubtitles } from "../captions/hls";
import type { CaptionRow } from "../captions/model";
import { trackStatement, tracksStatement } from "../captions/queries";
import { httpDate, notModified, preconditionStatus } from "../http/conditional";
import type { AppEnv } from "../http/context";
import { ApiError } from "../http/errors";
import { sha256Hex } from "../lib/crypto";
import { encodeOutputKey } from "../lib/storage-keys";
import { parseRange } from "./range";
import { playableVideo, playableVideoWith } from "./subject";
import { PLAY_PATH } from "./urls";

/** Every `/play/` answer, errors included: any origin may play (contract section 12). */
const CORS = {
  "access-control-allow-origin": "*",
  "access-control-expose-headers": "Content-Length, Content-Range, Accept-Ranges, ETag",
};

/**
 * Playback, straight from R2: the master playlist, the variant playlists and their segments, the
 * MP4 (with byte ranges) of a ready video, under its id or a token. One D1 read (the video) and one
 * R2 read per request; `no-cache` lets a CDN keep the bytes but revalidate every use, so a video
 * made private or deleted stops playing at once (README, "Playback and caching").
 */
export const playbackRoutes = new Hono<AppEnv>()
  .use(`${PLAY_PATH}/*`, async (c, next) => {
    await next();
    for (const [name, value] of Object.entries(CORS)) c.res.headers.set(name, value);
  })
  .options(`${PLAY_PATH}/*`, (c) =>
    c.body(null, 204, {
      "access-control-allow-methods": "GET, HEAD, OPTIONS",
      "access-control-allow-headers": "Range, If-None-Match, If-Modified-Since",
      "access-control-max-age": "86400",
    }),
  )
  // A caption track's files (contract §17): the track, its subtitle playlist, that playlist's segment.
  .on(["GET", "HEAD"], `${PLAY_PATH}/:subject/captions/*`, async (c) => {
    const subject = c.req.param("subject");
    const file = captionFile(new URL(c.req.url).pathname.slice(`${PLAY_PATH}/${subject}/`.length));
    const language = file?.language ?? "";
    const { row, also } = await playableVideoWith<CaptionRow>(c, subject, { fresh: false }, (db, id) =>
      trackStatement(db, id, language),
    );
    const [track] = also;
    if (!file || !track) throw new ApiError("not_found");
    if (file.kind === "track") return serveObject(c.env.MEDIA, track.object_key, c.req.raw, CAPTION_TYPE);
    const made = await captionTrackFile(c.env.MEDIA, row, track, file.kind);
    return serveText(c.req.raw, made.text, file.kind === "playlist" ? HLS_TYPE : CAPTION_TYPE, made.lastModified);
  })
  .on(["GET", "HEAD"], `${PLAY_PATH}/:subject/*`, async (c) => {
    const subject = c.req.param("subject");
    const path = new URL(c.req.url).pathname.slice(`${PLAY_PATH}/${subject}/`.length);
    // The video first (a private one's id URLs answer 403 before the other checks), then the file.
    if (path === "master.m3u8") return serveMaster(c, subject);
    const row = await playableVideo(c, subject, { fresh: false });
    if (!isOutputPath(path) || !/\.(m3u8|ts|mp4|jpg)$/.test(path)) throw new ApiError("not_found");
    if (path === "video.mp4" && row.has_mp4 !== 1) throw new ApiError("not_found");
    const key = encodeOutputKey(row.project_id, row.id, row.output_attempt as number, path);
    return serveObject(c.env.MEDIA, key, c.req.raw, contentType(path));
  });

const HLS_TYPE = contentType("master.m3u8");
const CAPTION_TYPE = "text/vtt";

/**
 * The master playlist, read with the video's caption tracks in the same D1 round trip: as stored
 * when it has none, else with its SUBTITLES group (so adding or deleting a track changes it at once).
 */
async function serveMaster(c: Context<AppEnv>, subject: string): Promise<Response> {
  const { row, also: tracks } = await playableVideoWith<CaptionRow>(c, subject, { fresh: true }, tracksStatement);
  const key = encodeOutputKey(row.project_id, row.id, row.output_attempt as number, "master.m3u8");
  if (tracks.length === 0) return serveObject(c.env.MEDIA, key, c.req.raw, HLS_TYPE);
  const stored = await c.env.MEDIA.get(key);
  if (!stored) throw new ApiError("not_found");
  // No Last-Modified: the playlist is put together from the stored one and the tracks, and a
  // deleted track leaves no date behind; the ETag (of the bytes) answers conditional requests.
  return serveText(c.req.raw, withSubtitles(await stored.text(), tracks), HLS_TYPE);
}

/**
 * A text made for this request as an HTTP answer: an ETag of its bytes, `Last-Modified` when it
 * has a date, conditional requests (304, 412) as for stored files; the whole text, never a range.
 */
async function serveText(request: Request, text: string, type: string, lastModified?: number): Promise<Response> {
  const etag = `"${(await sha256Hex(text)).slice(0, 32)}"`;
  const headers = new Headers({ "content-type": type, "cache-control": "no-cache", etag });
  if (lastModified !== undefined) headers.set("last-modified", httpDate(lastModified));
  const status = preconditionStatus(request.headers, { etag, ...(lastModified === undefined ? {} : { lastModified }) });
  if (status === 412) throw new ApiError("precondition_failed");
  if (status === 304) return new Response(null, { status, headers });
  const bytes = new TextEncoder().encode(text);
  headers.set("content-length", String(bytes.byteLength));
  return new Response(request.method === "HEAD" ? null : bytes, { headers });
}

/**
 * One R2 object as an HTTP answer: `Accept-Ranges`, a single byte range as `206` (`416` with
 * a Content-Range naming the size, past the end), `ETag` and `Last-Modified` with their conditional
 * requests (304). One R2 round trip, but for a range past the end, which needs the size first.
 */
async function serveObject(media: R2Bucket, key: string, request: Request, type: string): Promise<Response> {
  const rangeHeader = request.headers.get("range");
  const wanted = rangeHeader ? requestedRange(rangeHeader) : undefined;
  let object: R2ObjectBody | null;
  try {
    object = await media.get(key, wanted ? { range: wanted } : {});
  } catch (error) {
    if (!wanted) throw error;
    // R2 refuses a range it cannot serve as asked (past the end, say): ask again knowing the size.
    const head = await media.head(key);
    if (!head) throw new ApiError("not_found");
    const range = parseRange(rangeHeader, head.size);
    if (range === "unsatisfiable") throw unsatisfiable(head.size);
    object = await media.get(key, range ? { range } : {});
  }
  if (!object) throw new ApiError("not_found");
  const headers = new Headers({
    "content-type": type,
    "accept-ranges": "bytes",
    "cache-control": "no-cache",
    etag: object.httpEtag,
    "last-modified": httpDate(object.uploaded),
  });
  const conditional = await notModified(request.headers, object, headers);
  if (conditional) return conditional;
  const range = parseRange(rangeHeader, object.size);
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

/**
 * The range to ask R2 for before the size is known (R2 clamps the end itself); `undefined` for the
 * whole file, as `parseRange` reads the header.
 */
function requestedRange(header: string): R2Range | undefined {
  const parsed = parseRange(header, Number.MAX_SAFE_INTEGER);
  if (parsed === null) return undefined;
  const suffix = /^bytes=-(\d+)$/i.exec(header.trim());
  if (suffix) return { suffix: Number(suffix[1]) };
  if (parsed === "unsatisfiable") return undefined;
  const bounded = /^bytes=\d+-\d+$/i.test(header.trim());
  return bounded ? { offset: parsed.offset, length: parsed.length } : { offset: parsed.offset };
}

function unsatisfiable(size: number): ApiError {
  return new ApiError("range_not_satisfiable", { headers: { "content-range": `bytes */${size}` } });
}
