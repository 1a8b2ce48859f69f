import type { Db } from "../lib/db";
import { logError } from "../lib/log";
import { abortMultipartUpload, deleteAll } from "../lib/r2";
import { audioTrackPrefix } from "../lib/storage-keys";
import { sendAudio } from "../queues/encodings";
import { sendImport } from "../queues/imports";
import type { AudioTrackRow } from "./model";
import { finishAudioTrack, forgetFetchedParts } from "./queries";

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
export async function askToMake(queue: Queue, db: Db, track: AudioTrackRow): Promise<void> {
  try {
    await sendAudio(queue, messageOf(track));
  } catch (error) {
    logError("audio tracks: ask the coordinator", error, { videoId: track.video_id });
    const failed = { status: "errored", code: "encoding_failed", message: NOT_STARTED } as const;
    await finishAudioTrack(db, trackGeneration(track), failed, Date.now());
    throw error;
  }
}

/**
 * Starts the fetch of `track`'s file (put by URL) by the imports' machinery (docs/imports.md),
 * which asks the coordinator to make it once the file is whole. A message that cannot be sent is
 * only logged: the imports' sweep sends the message of a fetch no run works on.
 */
export async function startTrackImport(queue: Queue, track: AudioTrackRow): Promise<void> {
  const message = {
    projectId: track.project_id,
    videoId: track.video_id,
    track: { language: track.language, generation: track.generation },
  };
  await sendImport(queue, message).catch((error) =>
    logError("audio tracks: start a fetch (the sweep sends it)", error, { videoId: track.video_id }),
  );
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

/**
 * Lets go of a generation no track names any more (put again, or deleted): its objects, and the
 * fetch of its file when one was under way (its R2 multipart upload aborted, its parts' records
 * forgotten; the fetch's run stops at its next step, its lease gone with the row).
 */
export async function letGo(
  store: { db: Db; media: R2Bucket },
  track: Pick<AudioTrackRow, "project_id" | "video_id" | "generation" | "source_key" | "import_url" | "upload_r2_id">,
): Promise<void> {
  if (track.import_url !== null) {
    if (track.upload_r2_id) await abortMultipartUpload(store.media, track.source_key, track.upload_r2_id);
    await forgetFetchedParts(store.db, track.project_id, track.generation);
  }
  await dropGeneration(store.media, track.project_id, track.video_id, track.generation);
}
