import { PLAY_PATH } from "../videos/urls";
import { captionPaths } from "./hls";

/**
 * Where a track came from: `upload` (PUT by the customer); `generated` is kept for captions made
 * by speech recognition, which the service does not do yet.
 */
export const CAPTION_SOURCES = ["upload", "generated"] as const;
export type CaptionSource = (typeof CAPTION_SOURCES)[number];

export type CaptionRow = {
  project_id: string;
  video_id: string;
  /** BCP 47, in its canonical case (`canonicalLanguage`). */
  language: string;
  label: string;
  source: CaptionSource;
  /** The R2 object of its WebVTT. */
  object_key: string;
  created_at: string;
  updated_at: string;
};

export type Track = { language: string; label: string; source: CaptionSource; url: string };

/** A track's public WebVTT URL: under the video's id, or a playback token standing in for it. */
export function trackUrl(origin: string, subject: string, language: string): string {
  return `${origin}${PLAY_PATH}/${subject}/${captionPaths.track(language)}`;
}

/** The track object as the API shows it (contract §17). */
export function toTrack(origin: string, row: CaptionRow): Track {
  return {
    language: row.language,
    label: row.label,
    source: row.source,
    url: trackUrl(origin, row.video_id, row.language),
  };
}
