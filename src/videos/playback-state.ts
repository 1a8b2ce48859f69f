import { Forgetting } from "../lib/memo";

/** How long a video's playback state read from D1 is reused in an isolate (contract section 21). */
export const PLAYBACK_STATE_TTL_MS = 5_000;

/**
 * The forgetting of the videos' playback states that `src/playback/state.ts` remembers for at most
 * 5 s (the video's row, its caption tracks and its chapters, read in one D1 batch). Every write that
 * changes what `/play/` or `/embed/` answers (made private, its allowed origins, deleted, its project
 * deleted, any edit of its row through the API, a caption track put or deleted, its chapters put or
 * deleted, a custom thumbnail set or removed) forgets it here at once, so the change holds at once where it was made and within 5 s
 * in every other isolate. It lives here, below `playback/`, so that the writers can reach it.
 */
export const playbackStateForgetting = new Forgetting();

/** Forgets the playback state of `videoIds` (all videos' when none are named): call it after the write. */
export function forgetPlaybackStates(videoIds?: Iterable<string>): void {
  playbackStateForgetting.forget(videoIds);
}
