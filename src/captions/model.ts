import { PLAY_PATH } from "../videos/urls";
import { captionPaths } from "./hls";

/** Where a track came from: `upload` (put by the customer) or `generated` (heard from the speech). */
export const CAPTION_SOURCES = ["upload", "generated"] as const;
export type CaptionSource = (typeof CAPTION_SOURCES)[number];

/**
 * Where a track stands (docs/generated-captions.md): an uploaded one is `ready`; a generated one is
 * `processing` while its speech is heard, then `ready`, `errored` or `skipped` (no audio, or no
 * speech heard). Only a ready track is played (the master playlist, the embed page, its file).
 */
export const CAPTION_STATUSES = ["processing", "ready", "errored", "skipped"] as const;
export type CaptionStatus = (typeof CAPTION_STATUSES)[number];

/** Why a generated track errored; the captions table's CHECK lists the same. */
export const CAPTION_ERROR_CODES = ["transcription_failed"] as const;
export type CaptionError = { code: (typeof CAPTION_ERROR_CODES)[number]; message: string };

export type CaptionRow = {
  project_id: string;
  video_id: string;
  /** BCP 47, in its canonical case (`canonicalLanguage`). */
  language: string;
  label: string;
  source: CaptionSource;
  status: CaptionStatus;
  /** A generated track's request (a ULID): what an older request heard is never written over it. */
  generation: string | null;
  error_code: CaptionError["code"] | null;
  error_message: string | null;
  /** The R2 object of its WebVTT; '' while a generated track has none. */
  object_key: string;
  created_at: string;
  updated_at: string;
};

export type Track = {
  language: string;
  label: string;
  source: CaptionSource;
  status: CaptionStatus;
  url: string;
  /** Only on an errored track. */
  error?: CaptionError;
};

/** A track's public WebVTT URL: under the video's id, or a playback token standing in for it. */
export function trackUrl(origin: string, subject: string, language: string): string {
  return `${origin}${PLAY_PATH}/${subject}/${captionPaths.track(language)}`;
}

/** The track object as the API (and its events) show it. */
export function toTrack(origin: string, row: CaptionRow): Track {
  return {
    language: row.language,
    label: row.label,
    source: row.source,
    status: row.status,
    url: trackUrl(origin, row.video_id, row.language),
    ...(row.status === "errored" && row.error_code
      ? { error: { code: row.error_code, message: row.error_message ?? "" } }
      : {}),
  };
}
