import type { Plan } from "../../media-plan/plan.mjs";
import { parsePlan } from "../../media-plan/protocol.mjs";
import { livemodeOf, type Mode } from "../lib/tenant";
import { isoTime } from "../lib/time";

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

export type VideoRow = {
  id: string;
  project_id: string;
  /** 1 live, 0 test (contract §16): the mode of the key that created it. */
  livemode: number;
  title: string | null;
  status: VideoStatus;
  visibility: Visibility;
  source_key: string;
  upload_id: string | null;
  upload_r2_id: string | null;
  upload_expires_at: string | null;
  completion_lease_until: string | null;
  custom_thumbnail_key: string | null;
  created_at: string;
  updated_at: string;
  deleted_at: string | null;
  /** The parts the upload was completed with (`canonicalParts`), once it is. */
  completed_parts: string | null;
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
  /** 1 when the ready video has its M4A (its source has audio), 0 when silent (contract §19). */
  has_m4a: number | null;
  /**
   * The language (BCP 47) its source's audio stream is tagged with, kept when it became playable;
   * null when it names none or the video is older (docs/audio-tracks.md: the original is `und`).
   */
  audio_language: string | null;
  error_code: VideoError["code"] | null;
  error_message: string | null;
  /** On a deleted video: when everything it stored in R2 was removed. */
  storage_cleared_at: string | null;
  /** The tus direct upload that owns the multipart upload (src/uploads/), or null for the part API's. */
  tus_upload_id: string | null;
  /** JSON: the video's tags (string[]), metadata (string pairs) and allowed origins (patterns, [] = any): contract §19. */
  tags: string;
  metadata: string;
  allowed_origins: string;
  /** An import (contract §19): the URL, the first answer's validator, the running fetch's lease, transient failures. */
  import_url: string | null;
  import_validator: string | null;
  import_lease_until: string | null;
  import_failures: number;
  /** A clip (contract §19): the video it was cut from, and the span there in seconds; its source_key is that video's. */
  clip_of: string | null;
  clip_start: number | null;
  clip_end: number | null;
  /** The caption languages its creation asked to be generated once it is playable (JSON string[]), or null. */
  generated_captions: string | null;
};

/** The encoding columns of a video no attempt has started on. */
const NOT_ENCODED = {
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
  error_code: null,
  error_message: null,
  storage_cleared_at: null,
} as const satisfies Partial<VideoRow>;

/** The columns of a video that is neither an import nor a clip. */
export const NOT_IMPORTED_OR_CLIPPED = {
  import_url: null,
  import_validator: null,
  import_lease_until: null,
  import_failures: 0,
  clip_of: null,
  clip_start: null,
  clip_end: null,
} as const satisfies Partial<VideoRow>;

/** What a caller chooses of any new video, however its source comes (an upload, an import, a clip). */
export type VideoChoices = {
  title: string | null;
  visibility: Visibility;
  /** Contract §19; none when left out. */
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

/** The columns every new video's row starts with, whatever its source. */
function newRow(video: NewVideoBase) {
  return {
    id: video.id,
    project_id: video.projectId,
    livemode: livemodeOf(video.mode),
    title: video.title,
    visibility: video.visibility,
    source_key: video.sourceKey,
    completion_lease_until: null,
    custom_thumbnail_key: null,
    created_at: isoTime(video.now),
    updated_at: isoTime(video.now),
    deleted_at: null,
    completed_parts: null,
    tags: JSON.stringify(video.tags ?? []),
    metadata: JSON.stringify(video.metadata ?? {}),
    allowed_origins: JSON.stringify(video.allowedOrigins ?? []),
    generated_captions: video.generatedCaptions?.length ? JSON.stringify(video.generatedCaptions) : null,
    ...NOT_IMPORTED_OR_CLIPPED,
    ...NOT_ENCODED,
  } satisfies Partial<VideoRow>;
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

/** The row of a new import (contract §19): `importing`, with no upload session until its fetch opens one. */
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
 * The row of a new clip (contract §19): `uploaded` at once, with no upload session, reading the
 * source of the video it was cut from (`sourceKey` is that video's).
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

export type Thumbnail = { source: "auto" | "custom"; url: string };
export type Rendition = { resolution: string; width: number; height: number };
export type Playback = { hls: string; mp4: string | null; m4a: string | null };
/** Why a video is errored (contract sections 12 and 19); the videos table's CHECK lists the same. */
export const VIDEO_ERROR_CODES = ["invalid_source", "encoding_failed", "import_failed"] as const;
export type VideoError = { code: (typeof VIDEO_ERROR_CODES)[number]; message: string };

export type Video = {
  id: string;
  projectId: string;
  livemode: boolean;
  title: string | null;
  status: VideoStatus;
  visibility: Visibility;
  thumbnail: Thumbnail;
  /** Seconds, and the source's display size: null until the source has been probed. */
  duration: number | null;
  width: number | null;
  height: number | null;
  /** Lowest first; empty until the video is ready. */
  renditions: Rendition[];
  /** Set once the video is playable (contract section 15): while processing, `mp4` and `m4a` are null. */
  playback: Playback | null;
  /** Why the video is errored; null unless it is. */
  error: VideoError | null;
  tags: string[];
  metadata: Record<string, string>;
  allowedOrigins: string[];
  createdAt: string;
  updatedAt: string;
};

/** How long a started upload completion holds the video before another may take over. */
export const COMPLETION_LEASE_MS = 5 * 60 * 1000;
/** How long an upload session accepts parts. */
export const UPLOAD_SESSION_MS = 24 * 60 * 60 * 1000;
/** A test video is encoded from its first seconds only: it lasts at most this long (docs/api-guide.md). */
export const TEST_VIDEO_SECONDS = 10;
/** How long a test video lives (contract §16): the scheduled sweep deletes it this long after its creation. */
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

/** Whether the video plays: ready, or processing with its plan made (contract section 15). */
export function isPlayable(row: Pick<VideoRow, "status" | "encode_plan" | "output_attempt">): boolean {
  return row.status === "ready" || (row.status === "processing" && row.encode_plan !== null);
}

/** The video object, given its public URLs (thumbnail, and playback once ready). */
export function toVideo(
  row: VideoRow,
  urls: { thumbnail: Thumbnail; playback: Playback },
  now: number = Date.now(),
): Video {
  const ready = row.status === "ready";
  return {
    id: row.id,
    projectId: row.project_id,
    livemode: row.livemode === 1,
    title: row.title,
    status: effectiveStatus(row, now),
    visibility: row.visibility,
    thumbnail: urls.thumbnail,
    duration: row.duration,
    width: row.width,
    height: row.height,
    renditions: ready && row.renditions ? (JSON.parse(row.renditions) as Rendition[]) : [],
    playback: ready ? urls.playback : isPlayable(row) ? { hls: urls.playback.hls, mp4: null, m4a: null } : null,
    error:
      row.status === "errored" && row.error_code ? { code: row.error_code, message: row.error_message ?? "" } : null,
    tags: JSON.parse(row.tags) as string[],
    metadata: metadataObject(Object.entries(JSON.parse(row.metadata) as Record<string, string>)),
    allowedOrigins: allowedOriginsOf(row),
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

/**
 * A video's metadata pairs as an object without a prototype, so that every key the key pattern
 * allows is an ordinary property: on an ordinary object, `__proto__` names the prototype, and
 * `pairs["__proto__"] = value` would set it (or do nothing) instead of keeping the pair.
 */
export function metadataObject<T>(pairs: Iterable<[string, T]>): Record<string, T> {
  const object: Record<string, T> = Object.create(null);
  for (const [key, value] of pairs) object[key] = value;
  return object;
}

/** The video's allowed origins (contract §19): the patterns, [] when any origin may play it. */
export function allowedOriginsOf(row: Pick<VideoRow, "allowed_origins">): string[] {
  return JSON.parse(row.allowed_origins) as string[];
}

/** The codes a bulk entry can fail with (contract §6). */
export const ITEM_CODES = [
  "video_not_found",
  "upload_completion_in_progress",
  "internal_error",
  "not_attempted",
] as const;
export type ItemCode = (typeof ITEM_CODES)[number];
