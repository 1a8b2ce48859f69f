import type { Context } from "hono";
import type { AppEnv } from "../http/context";
import { ApiError } from "../http/errors";
import { parseUlid } from "../lib/ulid";
import { isPlayable, type VideoRow } from "../videos/model";
import { playbackVideo } from "./queries";
import { verifyPlaybackToken } from "./tokens";

/**
 * What `/play/<x>/` and `/embed/<x>` name (contract section 12), checked in the contract's order:
 * a ULID is a video id, anything else a token (`403 invalid_playback_token` unless it verifies);
 * an unknown or deleted video is `404 not_found`; a private video's id URL is
 * `403 playback_token_required`; a video not playable yet is `404 not_found`. Returns the video:
 * ready, or processing and playable (contract section 15).
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
  const id = parseUlid(subject);
  const videoId = id ?? (await verifyPlaybackToken(c.var.config.playbackSecret, subject, Date.now()));
  if (!videoId) throw new ApiError("invalid_playback_token");
  const db = options.fresh ? c.env.DB.withSession("first-primary") : c.var.db;
  const row = await playbackVideo(db, videoId);
  if (!row) throw new ApiError("not_found");
  if (id && row.visibility === "private") throw new ApiError("playback_token_required");
  if (!isPlayable(row)) throw new ApiError("not_found");
  return row;
}
