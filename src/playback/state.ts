import type { Context } from "hono";
import type { AudioTrackRow } from "../audio-tracks/model";
import { playableAudioTracksStatement } from "../audio-tracks/queries";
import type { CaptionRow } from "../captions/model";
import { playableTracksStatement } from "../captions/queries";
import { type ChaptersRow, type SavedChapters, savedChapters } from "../chapters/model";
import { chaptersStatement } from "../chapters/queries";
import type { AppEnv } from "../http/context";
import { ApiError } from "../http/errors";
import { Memo } from "../lib/memo";
import { PLAYBACK_STATE_TTL_MS, playbackStateForgetting } from "../lib/playback-cache";
import type { VideoRow } from "../videos/model";
import { playbackVideoStatement } from "./queries";
import { checkPlayable, type Subject, subjectOf } from "./subject";
import type { PlaybackGrant } from "./tokens";

/**
 * A video's playback state: the row the playback query returns (status, visibility, allowed
 * origins, its plan and every other column, so a column added to `videos` is part of it with no
 * change here), its caption tracks and its ready added audio tracks, each by language, and its
 * chapters (null when it has none), or null for a video that query did not find (unknown, deleted,
 * in a deleted project).
 */
export type PlaybackState = {
  row: VideoRow;
  tracks: CaptionRow[];
  audioTracks: AudioTrackRow[];
  chapters: SavedChapters | null;
};

/** The states as this isolate last read them (at most 10,000 videos), forgotten by the writes. */
const playbackStates = new Memo<PlaybackState | null>(PLAYBACK_STATE_TTL_MS, 10_000, playbackStateForgetting);

/**
 * A video's playback state, read from D1 at most once per PLAYBACK_STATE_TTL_MS in this isolate
 * (docs/playback-at-scale.md): the row, the tracks and the chapters in one batch, one round trip.
 * The read goes to the D1 primary: a replica that has not seen a write yet must not be remembered
 * for 5 s right after that write forgot the state.
 */
export async function playbackState(
  c: Context<AppEnv>,
  videoId: string,
): Promise<{ state: PlaybackState | null; remembered: boolean }> {
  const now = Date.now();
  const known = playbackStates.get(videoId, now);
  if (known !== undefined) return { state: known, remembered: true };
  const ticket = playbackStates.ticket();
  const db = c.env.DB.withSession("first-primary");
  const [video, tracks, audio, chapters] = await db.batch([
    playbackVideoStatement(db, videoId),
    playableTracksStatement(db, videoId),
    playableAudioTracksStatement(db, videoId),
    chaptersStatement(db, videoId),
  ]);
  const row = (video?.results[0] as VideoRow | undefined) ?? null;
  const state = row && {
    row,
    tracks: (tracks?.results ?? []) as CaptionRow[],
    audioTracks: (audio?.results ?? []) as AudioTrackRow[],
    chapters: savedChapters(chapters?.results[0] as ChaptersRow | undefined),
  };
  playbackStates.set(videoId, state, now, ticket);
  return { state, remembered: false };
}

/** What `namedObject` throws: R2 has no object under a key the video's state named. */
class StaleKey extends Error {}

/**
 * A file the video's state does not have (an audio track made ready since it was read, say): a
 * remembered state is read again and `serve` runs once more; a fresh one answers `404 not_found`.
 */
export function notInState(): never {
  throw new StaleKey();
}

/**
 * `read` of an R2 object whose key the video's state names (its custom thumbnail, a caption
 * track): when the object is not there (replaced since, its old object deleted, another isolate's
 * write), a remembered state is read again and `serve` runs once more; a fresh one answers
 * `404 not_found`.
 */
export async function namedObject<T>(read: Promise<T>): Promise<T> {
  try {
    return await read;
  } catch (error) {
    if (error instanceof ApiError && error.code === "not_found") throw new StaleKey();
    throw error;
  }
}

/** What `serve` is given: the checked video, what the subject grants, its caption and audio tracks and chapters. */
export type Playable = {
  row: VideoRow;
  grant: PlaybackGrant;
  tracks: CaptionRow[];
  audioTracks: AudioTrackRow[];
  chapters: SavedChapters | null;
};

/**
 * Answers a `/play/` or `/embed/` request about a playable video with `serve`, the video's state as
 * remembered (`playbackState`), checked in the order
 * docs/encoding.md#playback-tokens-and-the-embed-page gives (`checkPlayable`). What only grows (a
 * video becoming playable, then ready, its MP4 stored) is never held back by a remembered state:
 * when that state gives `404` for a video that is not ready, or names an R2 object that is gone
 * (`namedObject`), the state is read again and `serve` runs once more. What narrows who may play
 * (private, origins, deleted) and what changes a served file (tracks, chapters, thumbnail) is
 * forgotten by its write, so holds at once here.
 */
export async function withPlayableVideo<T>(
  c: Context<AppEnv>,
  subject: string,
  serve: (video: Playable) => Promise<T>,
): Promise<T> {
  return withPlayableSubject(c, await subjectOf(c, subject), serve);
}

/** `withPlayableVideo` of a subject already read (`subjectOf`): for a route that needs its video id first. */
export async function withPlayableSubject<T>(
  c: Context<AppEnv>,
  { grant, byId }: Subject,
  serve: (video: Playable) => Promise<T>,
): Promise<T> {
  const { videoId } = grant;
  const answer = (state: PlaybackState | null) =>
    serve({
      row: checkPlayable(c, state?.row ?? null, grant, byId),
      grant,
      tracks: state?.tracks ?? [],
      audioTracks: state?.audioTracks ?? [],
      chapters: state?.chapters ?? null,
    });
  const { state, remembered } = await playbackState(c, videoId);
  try {
    return await answer(state);
  } catch (error) {
    const row = state?.row;
    const grown =
      row !== undefined && row.status !== "ready" && error instanceof ApiError && error.code === "not_found";
    if (!(remembered && (grown || error instanceof StaleKey))) throw notFoundIfStale(error);
  }
  playbackStates.forget([videoId]);
  try {
    return await answer((await playbackState(c, videoId)).state);
  } catch (error) {
    throw notFoundIfStale(error);
  }
}

function notFoundIfStale(error: unknown): unknown {
  return error instanceof StaleKey ? new ApiError("not_found") : error;
}
