import { Memo } from "../lib/memo";
import type { VideoRow } from "./model";

/** How long a video's playback state read from D1 is reused in an isolate (contract section 21). */
export const PLAYBACK_STATE_TTL_MS = 5_000;

/**
 * A video's playback state as this isolate last read it from D1: the row the playback query
 * returns (status, visibility, its plan and every other column, so a column added to `videos` is
 * part of it with no change here), or null for a video that query did not find (unknown, deleted,
 * in a deleted project). Reused for at most 5 s (`src/playback/state.ts` reads through it); every
 * write that narrows who may play a video (made private, deleted, its project deleted, any edit
 * of its row through the API) forgets it here at once, so the change holds at once where it was
 * made and within 5 s in every other isolate.
 */
export const playbackStates = new Memo<VideoRow | null>(PLAYBACK_STATE_TTL_MS, 10_000);

/** Forgets the playback state of `videoIds` (all videos' when none are named): call it after the write. */
export function forgetPlaybackStates(videoIds?: Iterable<string>): void {
  playbackStates.forget(videoIds);
}
