import type { Plan } from "../../media-plan/plan.mjs";
import { UNDETERMINED } from "../lib/language";
import { planOf, type VideoRow } from "../videos/model";

/**
 * A video's audio in other languages (docs/audio-tracks.md): the source's own audio, the original,
 * and the tracks added to it, one per language, each made from its own file into segments cut at
 * the video's segments.
 */

/** At most this many tracks per video, the original counted: one more language is `409 quota_exceeded`. */
export const MAX_AUDIO_TRACKS = 10;

/** An added track's file: at most 100 MB (the Workers request body limit of most plans). */
export const MAX_AUDIO_TRACK_BYTES = 100 * 1000 * 1000;

/** Where an added track stands: `processing` until every segment is stored, then `ready` or `errored`. */
export const AUDIO_TRACK_STATUSES = ["processing", "ready", "errored"] as const;
export type AudioTrackStatus = (typeof AUDIO_TRACK_STATUSES)[number];

/**
 * Why an added track errored; the audio_tracks table's CHECK lists the same: `invalid_source` (its
 * file has no audio stream, or it does not decode), `encoding_failed` (its work failed three times),
 * `import_failed` (its file, put by URL, could not be fetched: docs/imports.md).
 */
export const AUDIO_TRACK_ERROR_CODES = ["invalid_source", "encoding_failed", "import_failed"] as const;
export type AudioTrackError = { code: (typeof AUDIO_TRACK_ERROR_CODES)[number]; message: string };

/** The label of the source's own audio. */
export const ORIGINAL_LABEL = "Original";

export type AudioTrackRow = {
  project_id: string;
  video_id: string;
  /** BCP 47, in its canonical case (`canonicalLanguage`). */
  language: string;
  label: string;
  /** The PUT that made it (a ULID): its objects live under `audioTrackPrefix` of it. */
  generation: string;
  /** Its file as it was sent. */
  source_key: string;
  status: AudioTrackStatus;
  error_code: AudioTrackError["code"] | null;
  error_message: string | null;
  /** A track put by URL, while its file is fetched (docs/imports.md): the URL, else null. */
  import_url: string | null;
  /** The fetch's state, as an importing video's: the origin's validator, the run's lease, its transient failures, the R2 multipart upload. */
  import_validator: string | null;
  import_lease_until: string | null;
  import_failures: number;
  upload_r2_id: string | null;
  created_at: string;
  updated_at: string;
};

/** A track as the API shows it: the original is `default`, and always `ready`. */
export type AudioTrack = {
  language: string;
  label: string;
  status: AudioTrackStatus;
  default: boolean;
  /** Only on an errored track. */
  error?: AudioTrackError;
};

export function toAudioTrack(row: AudioTrackRow): AudioTrack {
  return {
    language: row.language,
    label: row.label,
    status: row.status,
    default: false,
    ...(row.status === "errored" && row.error_code
      ? { error: { code: row.error_code, message: row.error_message ?? "" } }
      : {}),
  };
}

/**
 * The video's own audio as a track, or null when its source has none (or it is not probed yet):
 * the language its audio stream is tagged with, else `und`.
 */
export function originalTrack(video: VideoRow): AudioTrack | null {
  if (!hasOwnAudio(video)) return null;
  return { language: originalLanguage(video), label: ORIGINAL_LABEL, status: "ready", default: true };
}

/** The original's language: its stream's tag, or `und` when it names none (or the video is older). */
export function originalLanguage(video: Pick<VideoRow, "audio_language">): string {
  return video.audio_language ?? UNDETERMINED;
}

/** Whether the video's source has audio: its plan says, or (encoded before plans) its M4A. */
export function hasOwnAudio(video: Pick<VideoRow, "encode_plan" | "has_m4a">): boolean {
  const plan = planOf(video);
  return plan ? plan.audio : video.has_m4a === 1;
}

/** Added tracks the video may hold: the original takes one of the ten. */
export function addedTrackLimit(plan: Plan): number {
  return MAX_AUDIO_TRACKS - (plan.audio ? 1 : 0);
}
