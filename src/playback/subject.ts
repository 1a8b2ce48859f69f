import type { Context } from "hono";
import type { AppEnv } from "../http/context";
import { ApiError } from "../http/errors";
import { parseUlid } from "../lib/ulid";
import type { VideoRow } from "../videos/model";
import { playbackVideo } from "./queries";
import { verifyPlaybackToken } from "./tokens";

/**
 * What `/play/<x>/` and `/embed/<x>` name (contract section 12), checked in the contract's order:
 * a ULID is a video id, anything else a token (`403 invalid_playback_token` unless it verifies);
 * an unknown or deleted video is `404 not_found`; a private video's id URL is
 * `403 playback_token_required`; a video not ready is `404 not_found`. Returns the ready video.
 */
export async function playableVideo(c: Context<AppEnv>, subject: string): Promise<VideoRow> {
  const id = parseUlid(subject);
  const videoId = id ?? (await verifyPlaybackToken(c.var.config.playbackSecret, subject, Date.now()));
  if (!videoId) throw new ApiError("invalid_playback_token");
  const row = await playbackVideo(c.var.db, videoId);
  if (!row) throw new ApiError("not_found");
  if (id && row.visibility === "private") throw new ApiError("playback_token_required");
  if (row.status !== "ready" || row.output_attempt === null) throw new ApiError("not_found");
  return row;
}
