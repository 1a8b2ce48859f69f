import { Forgetting } from "./memo";

/**
 * The cache of videos' playback states (docs/playback-at-scale.md): what `src/playback/state.ts`
 * reads from D1 (a video's row, its ready caption and audio tracks, its chapters, in one batch) and
 * remembers in this isolate for at most PLAYBACK_STATE_TTL_MS; and its forgetting, which every
 * write that changes what `/play/` or `/embed/` answers goes through (`changingPlayback`). The
 * functions that write those rows (videos' visibility, allowed origins and edits, their deletion and
 * their project's, caption and audio tracks, chapters, custom thumbnails) run their write through it,
 * so no caller can change a video and leave its state remembered: the change holds at once where it
 * was made, and within the TTL in every other isolate. It lives below every writer's folder.
 */

/** How long a video's playback state read from D1 is reused in an isolate. */
export const PLAYBACK_STATE_TTL_MS = 5_000;

/** What the reader's memo is built on: a forget here drops its entries. */
export const playbackStateForgetting = new Forgetting();

/**
 * Runs `write` and, once it has done, forgets the playback state of the videos `changed` names of
 * its result (every video's for "all"; none for null: nothing was written).
 */
export async function changingPlayback<T>(
  write: Promise<T>,
  changed: (result: T) => Iterable<string> | "all" | null,
): Promise<T> {
  const result = await write;
  const videos = changed(result);
  if (videos === "all") playbackStateForgetting.forget();
  else if (videos !== null) playbackStateForgetting.forget(videos);
  return result;
}
