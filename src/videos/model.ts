import type { Plan } from "../../media-plan/plan.mjs";
import { parsePlan } from "../../media-plan/protocol.mjs";

export const VISIBILITIES = ["public", "unlisted", "private"] as const;
export type Visibility = (typeof VISIBILITIES)[number];
/** Every status a video can have; the videos table's CHECK lists the same (test/http/constants.test.ts). */
export const VIDEO_STATUSES = [
  "waiting_for_upload",
  "importing",
  "upload_completing",
  "uploaded",
  "processing",
  "ready",
  "errored",
] as const;
export type VideoStatus = (typeof VIDEO_STATUSES)[number];

/**
 * The statuses of a video whose source is stored and is being encoded, or was: what a clip is cut
 * from and what captions are generated for (an `uploaded` video waits for its encoding to start,
 * an errored one has none).
 */
export const WITH_SOURCE: readonly VideoStatus[] = ["processing", "ready"];

/** The statuses of a video whose source is whole in R2: `uploaded` or any later one. */
export const UPLOADED_OR_LATER: readonly VideoStatus[] = ["uploaded", "processing", "ready", "errored"];

export function isUploaded(status: VideoStatus): boolean {
  return UPLOADED_OR_LATER.includes(status);
}

/**
 * A video's row in D1, by what each group of columns is about. Each group is whole in the row a
 * new video starts with (`new-rows.ts` builds every group), so a column added to a group and not
 * given its starting value fails the type check.
 */
export type VideoRow = VideoColumns & UploadColumns & EncodingColumns & ImportColumns & ClipColumns;

/** What every video has, however its source came: who owns it, what the API shows of it, its life. */
export type VideoColumns = {
  id: string;
  project_id: string;
  /** 1 live, 0 test (docs/api-guide.md#test-mode-and-going-live): the mode of the key that created it. */
  livemode: number;
  title: string | null;
  status: VideoStatus;
  visibility: Visibility;
  custom_thumbnail_key: string | null;
  created_at: string;
  updated_at: string;
  deleted_at: string | null;
  /** On a deleted video: when everything it stored in R2 was removed. */
  storage_cleared_at: string | null;
  /**
   * JSON: the video's tags (string[]), metadata (string pairs) and allowed origins (patterns, [] =
   * any): docs/import-clips-search.md.
   */
  tags: string;
  metadata: string;
  allowed_origins: string;
  /** The caption languages its creation asked to be generated once it is playable (JSON string[]), or null. */
  generated_captions: string | null;
  /** Why it is errored (its upload, import or encoding), once it is. */
  error_code: VideoError["code"] | null;
  error_message: string | null;
};

/** Its source's upload: where the source is stored, the multipart session that fills it, its completion. */
export type UploadColumns = {
  source_key: string;
  upload_id: string | null;
  upload_r2_id: string | null;
  upload_expires_at: string | null;
  completion_lease_until: string | null;
  /** The parts the upload was completed with (`canonicalParts`), once it is. */
  completed_parts: string | null;
  /** The tus direct upload that owns the multipart upload (src/uploads/), or null for the part API's. */
  tus_upload_id: string | null;
};

/** Its encoding: the attempts, what the probe found, the plan it plays by and what it made. */
export type EncodingColumns = {
  /** Encoding attempts started so far; while `processing`, the latest is the one running. */
  encode_attempt: number;
  /** While `processing`: when its encoder was last heard from. */
  encode_heartbeat_at: string | null;
  /** The encoding settings taken when the first attempt started (JSON `EncodeSettings`). */
  encode_settings: string | null;
  duration: number | null;
  width: number | null;
  height: number | null;
  /** Once ready: `Rendition[]` as JSON. */
  renditions: string | null;
  /** A video encoded before segments were made one by one: the attempt whose outputs are served. */
  output_attempt: number | null;
  /** The encoding plan (media-plan/plan.mjs, JSON), from when the video became playable. */
  encode_plan: string | null;
  /** When the video became playable (its plan was made): before it is ready. */
  playable_at: string | null;
  has_mp4: number | null;
  /** 1 when the ready video has its M4A (its source has audio), 0 when silent (docs/audio-only.md). */
  has_m4a: number | null;
  /**
   * The language (BCP 47) its source's audio stream is tagged with, kept when it became playable;
   * null when it names none or the video is older (docs/audio-tracks.md: the original is `und`).
   */
  audio_language: string | null;
};

/**
 * An import (docs/imports.md): the URL, the first answer's validator, the running fetch's lease,
 * transient failures.
 */
export type ImportColumns = {
  import_url: string | null;
  import_validator: string | null;
  import_lease_until: string | null;
  import_failures: number;
};

/**
 * A clip (docs/import-clips-search.md#clips-as-videos-clipof): the video it was cut from, and the
 * span there in seconds; its source_key is that video's.
 */
export type ClipColumns = {
  clip_of: string | null;
  clip_start: number | null;
  clip_end: number | null;
};

export type Rendition = { resolution: string; width: number; height: number };
/**
 * Why a video is errored (docs/encoding.md#hostile-sources-failures-and-deletes, docs/imports.md);
 * the videos table's CHECK lists the same.
 */
export const VIDEO_ERROR_CODES = ["invalid_source", "encoding_failed", "import_failed"] as const;
export type VideoError = { code: (typeof VIDEO_ERROR_CODES)[number]; message: string };

/** How long a started upload completion holds the video before another may take over. */
export const COMPLETION_LEASE_MS = 5 * 60 * 1000;
/** How long an upload session accepts parts. */
export const UPLOAD_SESSION_MS = 24 * 60 * 60 * 1000;
/** A test video is encoded from its first seconds only: it lasts at most this long (docs/api-guide.md). */
export const TEST_VIDEO_SECONDS = 10;
/**
 * How long a test video lives (docs/api-guide.md#test-mode-and-going-live): the scheduled sweep
 * deletes it this long after its creation.
 */
export const TEST_VIDEO_LIFETIME_MS = 24 * 60 * 60 * 1000;

/**
 * The status a client sees: a completion whose lease has run out is no longer in flight, so the
 * video is waiting for its upload again.
 */
export function effectiveStatus(row: Pick<VideoRow, "status" | "completion_lease_until">, now: number): VideoStatus {
  if (row.status === "upload_completing" && !completionInFlight(row, now)) return "waiting_for_upload";
  return row.status;
}

export function completionInFlight(row: Pick<VideoRow, "status" | "completion_lease_until">, now: number): boolean {
  return (
    row.status === "upload_completing" &&
    row.completion_lease_until !== null &&
    Date.parse(row.completion_lease_until) > now
  );
}

/**
 * The video's encoding plan as stored (`encode_plan`), read through the protocol's parser (the one
 * the encoder checks every job's plan with), so a stored plan is never trusted by a cast; null for
 * a video without one (not playable yet, or encoded before plans).
 */
export function planOf(row: Pick<VideoRow, "encode_plan">): Plan | null {
  return row.encode_plan === null ? null : parsePlan(JSON.parse(row.encode_plan));
}

/**
 * The labels of the video's renditions (`"720p"`): once ready, those it shows; while it plays
 * before that, its plan's; none before it plays.
 */
export function renditionLabelsOf(row: Pick<VideoRow, "renditions" | "encode_plan">): string[] {
  if (row.renditions !== null) return (JSON.parse(row.renditions) as Rendition[]).map((r) => r.resolution);
  return planOf(row)?.renditions.map((r) => r.resolution) ?? [];
}

/**
 * Whether the video plays: ready, or processing with its plan made
 * (docs/encoding.md#long-videos-playable-in-seconds).
 */
export function isPlayable(row: Pick<VideoRow, "status" | "encode_plan" | "output_attempt">): boolean {
  return row.status === "ready" || (row.status === "processing" && row.encode_plan !== null);
}

/**
 * The video's allowed origins (docs/import-clips-search.md#allowed-origins-allowedorigins): the
 * patterns, [] when any origin may play it.
 */
export function allowedOriginsOf(row: Pick<VideoRow, "allowed_origins">): string[] {
  return JSON.parse(row.allowed_origins) as string[];
}

/** The codes a bulk entry can fail with (docs/api-rules.md#bulk-actions). */
export const ITEM_CODES = [
  "video_not_found",
  "upload_completion_in_progress",
  "internal_error",
  "not_attempted",
] as const;
export type ItemCode = (typeof ITEM_CODES)[number];
