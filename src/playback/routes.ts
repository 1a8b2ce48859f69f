import { type Context, Hono } from "hono";
import { frameAt, MIN_STILL_WIDTH } from "../../media-plan/pictures.mjs";
import { type Plan, posterTime, segmentCount, timelineStart, topRendition } from "../../media-plan/plan.mjs";
import { segmentIndex } from "../../media-plan/protocol.mjs";
import { audioFile, audioRenditions } from "../audio-tracks/hls";
import { type AudioTrackRow, originalTrack } from "../audio-tracks/model";
import { captionFile, captionTrackFile } from "../captions/files";
import { withSubtitles } from "../captions/hls";
import type { CaptionRow } from "../captions/model";
import { chaptersTrack } from "../chapters/track";
import { coordinatorOf } from "../encoding/pipeline/coordinator-stub";
import { serveBuffer, serveR2Object } from "../http/bytes";
import type { AppEnv } from "../http/context";
import { ApiError } from "../http/errors";
import { sha256Hex } from "../lib/crypto";
import {
  audioTrackSegmentKey,
  encodeOutputKey,
  frameKey,
  m4aKey,
  mp4Key,
  segmentKey,
  storyboardKey,
} from "../lib/storage-keys";
import { limitClient } from "../rate-limit/middleware";
import { planOf, type VideoRow } from "../videos/model";
import { PLAY_PATH, thumbnailKeyOf } from "../videos/urls";
import { playCors } from "./cors";
import { serveCached } from "./edge-cache";
import { masterPlaylist, variantPlaylist } from "./playlists";
import { bindsRange, coveringSegments, requestedSpan, spanQuery, tokenSpan } from "./span";
import { namedObject, notInState, withPlayableVideo } from "./state";
import { STORYBOARD_SPRITE, storyboardVtt } from "./storyboard";
import type { PlaybackGrant } from "./tokens";

const PLAYLIST = "application/vnd.apple.mpegurl";
const CAPTIONS = "text/vtt";
const TYPES: Record<string, string> = {
  m3u8: PLAYLIST,
  ts: "video/mp2t",
  mp4: "video/mp4",
  m4a: "audio/mp4",
  jpg: "image/jpeg",
};
/** A file of a video encoded before segments were made one by one, under its attempt's folder. */
const LEGACY_FILE =
  /^(?:[A-Za-z0-9_-][A-Za-z0-9._-]{0,63}\/){0,3}[A-Za-z0-9_-][A-Za-z0-9._-]{0,63}\.(m3u8|ts|mp4|jpg)$/;
/** Where a video encoded before segments were made one by one starts its MPEG-TS timeline (90 kHz). */
const LEGACY_TIMELINE_START = 126_000;

const CORS = playCors({
  methods: ["GET", "HEAD", "OPTIONS"],
  headers: ["Range", "If-Range", "If-None-Match", "If-Modified-Since"],
  expose: ["Content-Length", "Content-Range", "Accept-Ranges", "ETag"],
});

/** Playback files may be kept by a CDN, but revalidated at every use. */
const PLAYBACK_CACHE = "no-cache";
/** A video's thumbnail under /play/ is the video's or a token holder's: no shared cache keeps it. */
const THUMBNAIL_CACHE = "private";

/**
 * Playback: the master and variant playlists (made from the video's plan, the master with the
 * video's caption tracks), the segments, the MP4 and the M4A (with byte ranges, from R2), the caption files,
 * the chapters, the storyboard, the current thumbnail and frames at any time, of a playable video,
 * under its id or a token. Every answer reads the video's state (its row, caption tracks and
 * chapters, one D1 batch) as remembered for at most 5 s (`state.ts`), at most one R2 read, and
 * for a segment or frame not made yet the video's coordinator. The files that never change once
 * stored (segments, frames, the sprite, the MP4, the M4A, a legacy attempt's files) are served with
 * `serveCached`, from the location's cache once a viewer there had them (`edge-cache.ts`); a file
 * that can be replaced (the thumbnail, a caption track) with `serveR2Object`, from R2 every time;
 * `no-cache` lets a CDN keep the bytes but revalidate every use, so a video made private or deleted
 * stops playing at once (docs/encoding.md).
 */
export const playbackRoutes = new Hono<AppEnv>()
  .use(`${PLAY_PATH}/*`, CORS.headers)
  .options(`${PLAY_PATH}/*`, CORS.preflight)
  // The video's current thumbnail (its custom image, else the poster frame), with its own type: how
  // a token holder sees a private video's picture, and the embed page's poster
  // (docs/encoding.md#playback-tokens-and-the-embed-page); with `time` (and `width`), the frame at
  // that time (docs/encoding.md#frames-and-the-storyboard). Under a ranged token, the poster (a
  // frame 1 s in) would show a moment outside the range: the range's own poster frame stands for
  // it. A custom thumbnail is the owner's picture of the video, no moment of it, and is served as
  // it is.
  .on(["GET", "HEAD"], `${PLAY_PATH}/:subject/thumbnail`, (c) =>
    withPlayableVideo(c, c.req.param("subject"), ({ row, grant }) => {
      const poster = bindsRange(grant) && row.custom_thumbnail_key === null;
      if (c.req.queries("time") !== undefined || poster) return serveFrame(c, row, grant);
      const answer = { cacheControl: THUMBNAIL_CACHE };
      return namedObject(serveR2Object(c.env.MEDIA, thumbnailKeyOf(row), c.req.raw, answer));
    }),
  )
  // A caption track's files (docs/captions-and-embed.md): the track, its subtitle playlist, that
  // playlist's segment; under a ranged token the track and the segment hold only the cues that
  // meet its range.
  .on(["GET", "HEAD"], `${PLAY_PATH}/:subject/captions/*`, (c) => {
    const subject = c.req.param("subject");
    const file = captionFile(new URL(c.req.url).pathname.slice(`${PLAY_PATH}/${subject}/`.length));
    return withPlayableVideo(c, subject, async ({ row, grant, tracks }) => {
      const track = tracks.find((one) => one.language === file?.language);
      if (!file || !track) throw new ApiError("not_found");
      const range = tokenSpan(grant, row.duration ?? Number.POSITIVE_INFINITY);
      if (file.kind === "track" && range === null) {
        return namedObject(serveR2Object(c.env.MEDIA, track.object_key, c.req.raw, playback(CAPTIONS)));
      }
      const making = captionTrackFile(c.env.MEDIA, row, track, file.kind, mpegtsStart(row), range);
      // The track and the segment read the track's object; the playlist only the video's duration.
      const made = await (file.kind === "playlist" ? making : namedObject(making));
      return serveText(c.req.raw, made.text, file.kind === "playlist" ? PLAYLIST : CAPTIONS, made.lastModified);
    });
  })
  // The video's chapters as a WebVTT chapters track (docs/chapters.md), made from its playback state:
  // with a token bound to a range, only the chapters that meet it.
  .on(["GET", "HEAD"], `${PLAY_PATH}/:subject/chapters.vtt`, (c) =>
    withPlayableVideo(c, c.req.param("subject"), async ({ row, grant, chapters }) => {
      const range = row.duration ? requestedSpan({}, grant, row.duration) : null;
      const track = chaptersTrack(chapters, row.duration, range);
      if (!track) throw new ApiError("not_found");
      return serveText(c.req.raw, track.text, CAPTIONS, track.lastModified);
    }),
  )
  .on(["GET", "HEAD"], `${PLAY_PATH}/:subject/*`, async (c) => {
    const subject = c.req.param("subject");
    const path = new URL(c.req.url).pathname.slice(`${PLAY_PATH}/${subject}/`.length);
    // The video first (a private one's id URLs answer 403 before the other checks), then the file.
    // The video's state as this isolate remembers it (at most 5 s old, docs/playback-at-scale.md).
    return withPlayableVideo(c, subject, ({ row, grant, tracks, audioTracks }) =>
      path === "master.m3u8"
        ? serveMaster(c, row, grant, tracks, audioTracks)
        : serveFile(c, row, grant, path, audioTracks),
    );
  });

/** A file of a playable video under `/play/<x>/`, but its master playlist, thumbnail and captions. */
async function serveFile(
  c: Context<AppEnv>,
  row: VideoRow,
  grant: PlaybackGrant,
  path: string,
  audioTracks: AudioTrackRow[],
): Promise<Response> {
  const plan = planOf(row);
  // A video encoded before plans cannot be cut: a ranged token plays none of its files.
  if (plan === null) {
    if (bindsRange(grant)) throw new ApiError("not_found");
    return legacyFile(c, row, path);
  }
  const audio = audioFile(path);
  if (audio) {
    // A ready added audio track (docs/audio-tracks.md): its playlist is the video's segments,
    // cut by a clip's range as the variants' are; its segments are stored, never made on demand.
    const track = audioTracks.find((one) => one.generation === audio.generation) ?? notInState();
    if (audio.kind === "playlist") {
      const segments = coveringSegments(plan, requestedSpan(spanParams(c), grant, plan.duration));
      return serveText(c.req.raw, variantPlaylist(plan, segments), PLAYLIST, Date.parse(track.updated_at));
    }
    const bound = coveringSegments(plan, requestedSpan({}, grant, plan.duration));
    const index = segmentIndex(audio.name) as number;
    if (index < bound.first || index > bound.last || index >= segmentCount(plan)) throw new ApiError("not_found");
    const key = audioTrackSegmentKey(row.project_id, row.id, track.generation, audio.name);
    return serveCached(c.env.MEDIA, key, c.req.raw, playback(TYPES.ts));
  }
  const variant = /^([1-9][0-9]{0,4}p)\/index\.m3u8$/.exec(path);
  if (variant && hasRendition(plan, variant[1] as string)) {
    const segments = coveringSegments(plan, requestedSpan(spanParams(c), grant, plan.duration));
    return serveText(
      c.req.raw,
      variantPlaylist(plan, segments),
      PLAYLIST,
      Date.parse(row.playable_at ?? row.updated_at),
    );
  }
  const segment = /^([1-9][0-9]{0,4}p)\/(seg_[0-9]{5,6}\.ts)$/.exec(path);
  if (segment) {
    // A token bound to a range plays the segments that cover it, and no other file of the video.
    const bound = coveringSegments(plan, requestedSpan({}, grant, plan.duration));
    const index = segmentIndex(segment[2] as string) as number;
    if (index < bound.first || index > bound.last) throw new ApiError("not_found");
    return serveSegment(c, row, plan, segment[1] as string, segment[2] as string);
  }
  // A whole-video file (the MP4, the M4A, the storyboard and its sprite) holds what lies outside a
  // token's range: a ranged token has none of them (its `mp4` and `m4a` URLs are null).
  if (bindsRange(grant)) throw new ApiError("not_found");
  if (path === "video.mp4" && row.status === "ready" && row.has_mp4 === 1) {
    return serveCached(c.env.MEDIA, mp4Key(row.project_id, row.id), c.req.raw, playback(TYPES.mp4));
  }
  // The audio only (docs/audio-only.md), once ready, when the source has audio: byte ranges as the MP4.
  if (path === "audio.m4a" && row.status === "ready" && row.has_m4a === 1) {
    return serveCached(c.env.MEDIA, m4aKey(row.project_id, row.id), c.req.raw, playback(TYPES.m4a));
  }
  // The storyboard (docs/encoding.md#frames-and-the-storyboard), once ready: its WebVTT made from
  // the plan, its sprite from R2.
  if (path === "storyboard.vtt" && row.status === "ready") {
    return serveText(c.req.raw, storyboardVtt(plan), CAPTIONS);
  }
  if (path === STORYBOARD_SPRITE && row.status === "ready") {
    return serveCached(c.env.MEDIA, storyboardKey(row.project_id, row.id), c.req.raw, playback(TYPES.jpg));
  }
  throw new ApiError("not_found");
}

/** How a playback file is answered: its type, revalidated at every use. */
function playback(type: string | undefined) {
  return { type, cacheControl: PLAYBACK_CACHE };
}

/**
 * The frame at `?time=` seconds (0 to the video's duration), `?width=` pixels wide (16 to the
 * highest rendition's width; default that width), its height keeping the aspect
 * (docs/encoding.md#frames-and-the-storyboard): from R2 once made, else made now by the video's
 * coordinator, and the answer waits for it. The same frame and width is made once, so every answer
 * to it has the same bytes and ETag. Under a ranged token, a time outside the range is
 * `403 invalid_playback_token`, and without `time` the frame is the range's poster (as far into it
 * as the poster is into a video).
 */
async function serveFrame(c: Context<AppEnv>, row: VideoRow, grant: PlaybackGrant): Promise<Response> {
  const plan = planOf(row);
  if (plan === null) throw new ApiError("not_found");
  const top = topRendition(plan).width;
  const range = tokenSpan(grant, plan.duration);
  const time =
    range !== null && c.req.queries("time") === undefined
      ? range.start + posterTime(range.end - range.start)
      : queryNumber(
          c,
          "time",
          /^[0-9]+(\.[0-9]+)?$/,
          0,
          plan.duration,
          "a number of seconds from 0 to the video's duration",
        );
  if (range !== null && !(time >= range.start && time <= range.end)) {
    throw new ApiError("invalid_playback_token", {
      message: `This playback token plays ${range.start}–${range.end} s of the video; ${time} s lies outside.`,
    });
  }
  const width =
    c.req.queries("width") === undefined
      ? top
      : queryNumber(c, "width", /^[0-9]+$/, MIN_STILL_WIDTH, top, `an integer from ${MIN_STILL_WIDTH} to ${top}`);
  const frame = frameAt(plan, time);
  const key = frameKey(row.project_id, row.id, frame, width);
  const answer = { type: TYPES.jpg, cacheControl: THUMBNAIL_CACHE };
  try {
    return await serveCached(c.env.MEDIA, key, c.req.raw, answer);
  } catch (error) {
    if (!(error instanceof ApiError && error.code === "not_found")) throw error;
  }
  // A frame not yet made is bounded (docs/encoding.md#frames-and-the-storyboard): 60 a minute per
  // client address here, and 60 a minute per video in its coordinator; a frame already made was
  // served above, whatever the count.
  await limitClient(c, "frames");
  const outcome = await coordinatorOf(c.env, row.id).frame(frame, width);
  if (typeof outcome === "object") {
    throw new ApiError("rate_limited", {
      message: "Too many frames not yet made were asked for of this video; retry later.",
      headers: { "Retry-After": String(outcome.retryAfter) },
    });
  }
  if (outcome === "gone") throw new ApiError("not_found");
  if (outcome === "pending" || outcome === "failed") {
    throw new ApiError("frame_not_ready", { headers: { "retry-after": outcome === "pending" ? "1" : "5" } });
  }
  return serveCached(c.env.MEDIA, key, c.req.raw, answer);
}

/** The one value of query parameter `name`, matching `pattern`, from `min` to `max`; else 400 invalid_query. */
function queryNumber(c: Context<AppEnv>, name: string, pattern: RegExp, min: number, max: number, rule: string) {
  const values = c.req.queries(name) ?? [];
  const value = values.length === 1 && pattern.test(values[0] as string) ? Number(values[0]) : Number.NaN;
  if (!(value >= min && value <= max)) {
    throw new ApiError("invalid_query", { details: [{ path: name, message: `must be ${rule}` }] });
  }
  return value;
}

function hasRendition(plan: Plan, resolution: string): boolean {
  return plan.renditions.some((r) => r.resolution === resolution);
}

/**
 * A segment: from R2 when it is stored; while the video is processing, one not made yet is made
 * now, and the answer waits for it (docs/encoding.md#long-videos-playable-in-seconds). Once served,
 * its bytes never change: the first stored is the one kept.
 */
async function serveSegment(c: Context<AppEnv>, row: VideoRow, plan: Plan, resolution: string, name: string) {
  const index = segmentIndex(name) as number;
  if (!hasRendition(plan, resolution) || index >= segmentCount(plan)) throw new ApiError("not_found");
  const key = segmentKey(row.project_id, row.id, resolution, name);
  const type = playback(TYPES.ts);
  try {
    return await serveCached(c.env.MEDIA, key, c.req.raw, type);
  } catch (error) {
    if (!(error instanceof ApiError && error.code === "not_found") || row.status !== "processing") throw error;
  }
  const outcome = await coordinatorOf(c.env, row.id).want(resolution, index);
  if (outcome === "gone") throw new ApiError("not_found");
  if (outcome === "pending") throw new ApiError("segment_not_ready", { headers: { "retry-after": "1" } });
  return serveCached(c.env.MEDIA, key, c.req.raw, type);
}

/**
 * The master playlist, from the video's state with its caption and audio tracks (remembered, read
 * in one D1 round trip): made from the plan (or as stored, for a video encoded before plans), with
 * an AUDIO group when it has a ready added audio track, and a SUBTITLES group when it has caption
 * tracks. Adding or deleting a track forgets the state, so changes it at once where it is made.
 */
async function serveMaster(
  c: Context<AppEnv>,
  row: VideoRow,
  grant: PlaybackGrant,
  tracks: CaptionRow[],
  audioTracks: AudioTrackRow[],
): Promise<Response> {
  let master: string;
  const plan = planOf(row);
  if (plan !== null) {
    const query = spanQuery(requestedSpan(spanParams(c), grant, plan.duration));
    master = masterPlaylist(plan, query, audioRenditions(originalTrack(row), audioTracks, query));
  } else {
    if (spanParams(c).start || spanParams(c).end || bindsRange(grant)) {
      throw new ApiError("invalid_query", { details: [{ path: "start", message: "this video cannot be cut" }] });
    }
    const key = encodeOutputKey(row.project_id, row.id, row.output_attempt as number, "master.m3u8");
    if (tracks.length === 0) return serveCached(c.env.MEDIA, key, c.req.raw, playback(PLAYLIST));
    const stored = await c.env.MEDIA.get(key);
    if (!stored) throw new ApiError("not_found");
    master = await stored.text();
  }
  // With tracks, no Last-Modified: a deleted track leaves no date behind; the ETag (of the bytes)
  // answers conditional requests.
  const withTracks = tracks.length > 0 || audioTracks.length > 0;
  const date = withTracks ? undefined : Date.parse(row.playable_at ?? row.updated_at);
  return serveText(c.req.raw, withSubtitles(master, tracks), PLAYLIST, date);
}

/** The clip range a playlist request asks for (docs/import-clips-search.md#clips-without-encoding). */
function spanParams(c: Context<AppEnv>) {
  return { start: c.req.queries("start"), end: c.req.queries("end") };
}

/** Where the video's MPEG-TS timeline starts (90 kHz): what its caption segments are mapped to. */
function mpegtsStart(row: VideoRow): number {
  return row.encode_plan === null ? LEGACY_TIMELINE_START : Math.round(timelineStart() * 90_000);
}

/**
 * A text made for this request (a playlist, a caption file) as an HTTP answer: the same text every
 * time for the same video, so its ETag is its hash; `Last-Modified` when it has a date; conditional
 * requests and ranges as for stored files.
 */
async function serveText(request: Request, text: string, type: string, lastModified?: number): Promise<Response> {
  const etag = `"${(await sha256Hex(text)).slice(0, 32)}"`;
  const facts = { etag, type, ...(lastModified === undefined ? {} : { lastModified }) };
  return serveBuffer(request, new TextEncoder().encode(text), facts, { cacheControl: PLAYBACK_CACHE });
}

/** A file of a video encoded before segments were made one by one: as its attempt stored it. */
function legacyFile(c: Context<AppEnv>, row: VideoRow, path: string): Promise<Response> {
  const match = LEGACY_FILE.exec(path);
  if (!match || row.output_attempt === null) throw new ApiError("not_found");
  if (path === "video.mp4" && row.has_mp4 !== 1) throw new ApiError("not_found");
  const key = encodeOutputKey(row.project_id, row.id, row.output_attempt, path);
  return serveCached(c.env.MEDIA, key, c.req.raw, playback(TYPES[match[1] as string]));
}
