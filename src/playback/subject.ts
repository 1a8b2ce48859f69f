import type { Context } from "hono";
import type { AppEnv } from "../http/context";
import { ApiError } from "../http/errors";
import { publicOrigin } from "../http/public-url";
import type { Db } from "../lib/db";
import { originAllowed } from "../lib/origins";
import { parseUlid } from "../lib/ulid";
import { allowedOriginsOf, isPlayable, type VideoRow } from "../videos/model";
import { playbackVideoStatement } from "./queries";
import { type PlaybackGrant, readPlaybackToken } from "./tokens";

/**
 * What `/play/<x>/` and `/embed/<x>` name (contract section 12), checked in the contract's order:
 * a ULID is a video id, anything else a token (`403 invalid_playback_token` unless it verifies);
 * an unknown or deleted video is `404 not_found`; a private video's id URL is
 * `403 playback_token_required`; a request from an origin the video (or the token) does not allow is
 * `403 origin_not_allowed` (contract §19); a video not playable yet is `404 not_found`. Returns the
 * video: ready, or processing and playable (contract section 15).
 *
 * `fresh` reads the D1 primary instead of the nearest replica: for the entry points of a playback
 * (the master playlist, the embed page), so a video made private or deleted stops starting to play
 * at once wherever it is asked for; the files a player fetches next read the nearest replica, which
 * follows within its replication delay.
 */
export async function playableVideo(
  c: Context<AppEnv>,
  subject: string,
  options: { fresh: boolean },
): Promise<VideoRow> {
  return (await playableVideoWith<never>(c, subject, options)).row;
}

/**
 * `playableVideo`, and what `also` selects of that video in the same D1 batch (one round trip):
 * its caption tracks, say. The rows `also` found come back only with a video that passed the checks.
 */
export async function playableVideoWith<T>(
  c: Context<AppEnv>,
  subject: string,
  options: { fresh: boolean },
  also?: (db: Db, videoId: string) => D1PreparedStatement,
): Promise<{ row: VideoRow; also: T[]; grant: PlaybackGrant }> {
  const { grant, byId } = await subjectOf(c, subject);
  const db = options.fresh ? c.env.DB.withSession("first-primary") : c.var.db;
  const video = playbackVideoStatement(db, grant.videoId);
  const [found, extra] = also ? await db.batch([video, also(db, grant.videoId)]) : [await video.all<VideoRow>()];
  const row = checkPlayable(c, (found?.results[0] as VideoRow | undefined) ?? null, grant, byId);
  return { row, also: (extra?.results ?? []) as T[], grant };
}

/**
 * What a subject grants: a ULID is the video's id (the whole video); anything else a token (its
 * video, and the range and origins it binds), `403 invalid_playback_token` unless it verifies.
 */
export async function subjectOf(c: Context<AppEnv>, subject: string): Promise<{ grant: PlaybackGrant; byId: boolean }> {
  const id = parseUlid(subject);
  const grant = id ? { videoId: id } : await readPlaybackToken(c.var.config.playbackSecret, subject, Date.now());
  if (!grant) throw new ApiError("invalid_playback_token");
  return { grant, byId: id !== null };
}

/**
 * The checks after the video is read, in the contract's order: 404, a private video's id URL 403,
 * an origin the video or the token does not allow 403 (§19), not playable 404.
 */
export function checkPlayable(c: Context<AppEnv>, row: VideoRow | null, grant: PlaybackGrant, byId: boolean): VideoRow {
  if (!row) throw new ApiError("not_found");
  if (byId && row.visibility === "private") throw new ApiError("playback_token_required");
  // The service's own origin is always allowed: its embed page, framed by an allowed origin, plays from it.
  const own = publicOrigin(c);
  for (const list of [allowedOriginsOf(row), grant.allowedOrigins ?? []]) {
    if (!originAllowed(list, c.req.raw.headers, own)) throw new ApiError("origin_not_allowed");
  }
  if (!isPlayable(row)) throw new ApiError("not_found");
  return row;
}
