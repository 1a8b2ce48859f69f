import { livemodeOf, type Mode } from "../lib/tenant";
import { isoTime } from "../lib/time";
import type { ClipColumns, EncodingColumns, ImportColumns, VideoRow, Visibility } from "./model";

/**
 * The row each kind of new video starts with: an upload's (the part API's and tus's), an import's,
 * a clip's. Every group of columns (`model.ts`) is given whole here.
 */

/** The encoding columns of a video no attempt has started on. */
const NOT_ENCODED: EncodingColumns = {
  encode_attempt: 0,
  encode_heartbeat_at: null,
  encode_settings: null,
  duration: null,
  width: null,
  height: null,
  renditions: null,
  output_attempt: null,
  encode_plan: null,
  playable_at: null,
  has_mp4: null,
  has_m4a: null,
  audio_language: null,
};

/** The columns of a video that is not an import. */
const NOT_IMPORTED: ImportColumns = {
  import_url: null,
  import_validator: null,
  import_lease_until: null,
  import_failures: 0,
};

/** The columns of a video that is not a clip. */
const NOT_CLIPPED: ClipColumns = { clip_of: null, clip_start: null, clip_end: null };

/** What a caller chooses of any new video, however its source comes (an upload, an import, a clip). */
export type VideoChoices = {
  title: string | null;
  visibility: Visibility;
  /** docs/import-clips-search.md#tags-and-metadata; none when left out. */
  tags?: string[] | undefined;
  metadata?: Record<string, string> | undefined;
  allowedOrigins?: string[] | undefined;
  /** The caption languages to generate once it is playable (docs/generated-captions.md); none when left out. */
  generatedCaptions?: string[] | undefined;
};

/** What every new video is given: its ids, owner, mode, source key, the caller's choices. */
export type NewVideoBase = VideoChoices & {
  id: string;
  projectId: string;
  mode: Mode;
  sourceKey: string;
  now: number;
};

/** What a new video starts with: its upload session (an R2 multipart upload), and for a tus upload its id. */
export type NewVideo = NewVideoBase & {
  uploadId: string;
  r2UploadId: string;
  expiresAt: number;
  tusUploadId: string | null;
};

/** The columns every new video's row starts with, whatever its source: all but its status and upload. */
function newRow(video: NewVideoBase) {
  return {
    id: video.id,
    project_id: video.projectId,
    livemode: livemodeOf(video.mode),
    title: video.title,
    visibility: video.visibility,
    custom_thumbnail_key: null,
    created_at: isoTime(video.now),
    updated_at: isoTime(video.now),
    deleted_at: null,
    storage_cleared_at: null,
    tags: JSON.stringify(video.tags ?? []),
    metadata: JSON.stringify(video.metadata ?? {}),
    allowed_origins: JSON.stringify(video.allowedOrigins ?? []),
    generated_captions: video.generatedCaptions?.length ? JSON.stringify(video.generatedCaptions) : null,
    error_code: null,
    error_message: null,
    source_key: video.sourceKey,
    completion_lease_until: null,
    completed_parts: null,
    ...NOT_ENCODED,
    ...NOT_IMPORTED,
    ...NOT_CLIPPED,
  } satisfies Omit<VideoRow, "status" | "upload_id" | "upload_r2_id" | "upload_expires_at" | "tus_upload_id">;
}

/** The row of a new video, waiting for its upload: the one rule, for the part API's and tus's. */
export function newVideoRow(video: NewVideo): VideoRow {
  return {
    ...newRow(video),
    status: "waiting_for_upload",
    upload_id: video.uploadId,
    upload_r2_id: video.r2UploadId,
    upload_expires_at: isoTime(video.expiresAt),
    tus_upload_id: video.tusUploadId,
  };
}

/** The row of a new import (docs/imports.md): `importing`, with no upload session until its fetch opens one. */
export function newImportRow(video: NewVideoBase & { url: string }): VideoRow {
  return {
    ...newRow(video),
    status: "importing",
    upload_id: null,
    upload_r2_id: null,
    upload_expires_at: null,
    tus_upload_id: null,
    import_url: video.url,
  };
}

/** A clip's span: the video whose source it is cut from (the source's owner) and the seconds there. */
export type ClipSpan = { of: string; start: number; end: number };

/**
 * The row of a new clip (docs/import-clips-search.md#clips-as-videos-clipof): `uploaded` at once,
 * with no upload session, reading the source of the video it was cut from (`sourceKey` is that
 * video's).
 */
export function newClipRow(video: NewVideoBase & { clip: ClipSpan }): VideoRow {
  return {
    ...newRow(video),
    status: "uploaded",
    upload_id: null,
    upload_r2_id: null,
    upload_expires_at: null,
    tus_upload_id: null,
    clip_of: video.clip.of,
    clip_start: video.clip.start,
    clip_end: video.clip.end,
  };
}
