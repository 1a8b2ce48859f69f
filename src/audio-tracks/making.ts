import type { Db } from "../lib/db";
import { logError } from "../lib/log";
import { deleteAll } from "../lib/r2";
import { audioTrackPrefix } from "../lib/storage-keys";
import { sendAudio } from "../videos/encode-queue";
import type { AudioTrackRow } from "./model";
import { finishAudioTrack } from "./queries";

/**
 * How an added track is made and let go (docs/audio-tracks.md): the routes tell the video's
 * coordinator, whose inbox is the encodings queue, that a track changed; the coordinator reads the
 * track's row and makes the generation it names, background work of the fair pool, then ends it
 * (`finishAudioTrack`). A generation's objects all live under one prefix and go together.
 */

/** The message a coordinator cannot do without failed to leave: the track errors rather than wait for ever. */
export const NOT_STARTED = "The audio track could not be made: its work could not be started.";

/**
 * Tells the video's coordinator that `track` was put: it makes it. When the message cannot be sent,
 * the track errors (a track left `processing` would never end) and this throws.
 */
export async function askToMake(env: Env, db: Db, track: AudioTrackRow): Promise<void> {
  try {
    await sendAudio(env.ENCODE_QUEUE, messageOf(track));
  } catch (error) {
    logError("audio tracks: ask the coordinator", error, { videoId: track.video_id });
    const failed = { status: "errored", code: "encoding_failed", message: NOT_STARTED } as const;
    await finishAudioTrack(db, trackGeneration(track), failed, Date.now());
    throw error;
  }
}

/**
 * Tells the video's coordinator that `track` was deleted: it stops making it. A message that cannot
 * be sent is only logged: the coordinator finds the track gone when it would end it, and lets go
 * of what it made then.
 */
export async function tellDeleted(env: Env, track: AudioTrackRow): Promise<void> {
  await sendAudio(env.ENCODE_QUEUE, messageOf(track)).catch((error) =>
    logError("audio tracks: tell the coordinator of a delete", error, { videoId: track.video_id }),
  );
}

function messageOf(track: AudioTrackRow) {
  return {
    projectId: track.project_id,
    videoId: track.video_id,
    audio: { language: track.language, generation: track.generation },
  };
}

export function trackGeneration(track: AudioTrackRow) {
  return { videoId: track.video_id, language: track.language, generation: track.generation };
}

/** Removes every object of one generation of a track: its file and its segments. */
export function dropGeneration(media: R2Bucket, projectId: string, videoId: string, generation: string) {
  return deleteAll(media, audioTrackPrefix(projectId, videoId, generation));
}
