import type { Context } from "hono";
import type { AppEnv } from "../http/context";
import { ApiError } from "../http/errors";
import type { VideoRow } from "../videos/model";
import { playbackStates } from "../videos/playback-state";
import { playbackVideoStatement } from "./queries";
import { checkPlayable, subjectOf } from "./subject";
import type { PlaybackGrant } from "./tokens";

/**
 * A video's playback state (the row `playbackVideoStatement` returns, or null for none), read
 * from D1 at most once per PLAYBACK_STATE_TTL_MS in this isolate (contract section 21). The read
 * goes to the D1 primary: a replica that has not seen a write yet must not be remembered for 5 s
 * right after that write forgot the state.
 */
export async function playbackState(
  c: Context<AppEnv>,
  videoId: string,
): Promise<{ row: VideoRow | null; remembered: boolean }> {
  const now = Date.now();
  const known = playbackStates.get(videoId, now);
  if (known !== undefined) return { row: known, remembered: true };
  const ticket = playbackStates.ticket();
  const row = await playbackVideoStatement(c.env.DB.withSession("first-primary"), videoId).first<VideoRow>();
  playbackStates.set(videoId, row, now, ticket);
  return { row, remembered: false };
}

/**
 * Answers a `/play/` request about a playable video with `serve`, the video's state as remembered
 * (`playbackState`), checked as `playableVideo` checks it. What only grows (a video becoming
 * playable, then ready, its MP4 stored) is never held back by a remembered state: when that state
 * gives `404` for a video that is not ready, the state is read again and `serve` runs once more.
 * What narrows who may play (private, deleted) is forgotten by its write, so holds at once here.
 */
export async function withPlayableVideo<T>(
  c: Context<AppEnv>,
  subject: string,
  serve: (row: VideoRow, grant: PlaybackGrant) => Promise<T>,
): Promise<T> {
  const { grant, byId } = await subjectOf(c, subject);
  const { videoId } = grant;
  const { row, remembered } = await playbackState(c, videoId);
  try {
    return await serve(checkPlayable(c, row, grant, byId), grant);
  } catch (error) {
    const mayHaveGrown = remembered && row !== null && row.status !== "ready";
    if (!(mayHaveGrown && error instanceof ApiError && error.code === "not_found")) throw error;
  }
  playbackStates.forget([videoId]);
  return serve(checkPlayable(c, (await playbackState(c, videoId)).row, grant, byId), grant);
}
