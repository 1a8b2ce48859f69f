import type { Context } from "hono";
import type { AppEnv } from "../http/context";
import { ApiError } from "../http/errors";
import { publicOrigin } from "../http/public-url";
import { originAllowed } from "../lib/origins";
import { parseUlid } from "../lib/ulid";
import { allowedOriginsOf, isPlayable, type VideoRow } from "../videos/model";
import { type PlaybackGrant, readPlaybackToken } from "./tokens";

/** What a `/play/` or `/embed/` path names: what it grants, and whether by the video's id. */
export type Subject = { grant: PlaybackGrant; byId: boolean };

/**
 * What a subject grants: a ULID is the video's id (the whole video); anything else a token (its
 * video, and the range and origins it binds), `403 invalid_playback_token` unless it verifies.
 */
export async function subjectOf(c: Context<AppEnv>, subject: string): Promise<Subject> {
  const id = parseUlid(subject);
  const grant = id ? { videoId: id } : await readPlaybackToken(c.var.config.playbackSecret, subject, Date.now());
  if (!grant) throw new ApiError("invalid_playback_token");
  return { grant, byId: id !== null };
}

/**
 * What `/play/<x>/` and `/embed/<x>` name is checked in the order
 * docs/encoding.md#playback-tokens-and-the-embed-page gives: a ULID is a video id, anything else a
 * token (`403 invalid_playback_token` unless it verifies, `subjectOf`); then, once the video's
 * state is read (`state.ts`): an unknown or deleted video is `404 not_found`; a private video's id
 * URL is `403 playback_token_required`; a request from an origin the video (or the token) does not
 * allow is `403 origin_not_allowed` (docs/import-clips-search.md#allowed-origins-allowedorigins); a
 * video not playable yet is `404 not_found`. Returns the video: ready, or processing and playable
 * (docs/encoding.md#long-videos-playable-in-seconds).
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
