export const VISIBILITIES = ["public", "unlisted", "private"] as const;
export type Visibility = (typeof VISIBILITIES)[number];
/** Every status a video can have; the videos table's CHECK lists the same (test/videos/model.test.ts). */
export const VIDEO_STATUSES = ["waiting_for_upload", "upload_completing", "uploaded"] as const;
export type VideoStatus = (typeof VIDEO_STATUSES)[number];

export type VideoRow = {
  id: string;
  project_id: string;
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
  /** The tus direct upload that owns the multipart upload (src/uploads/), or null for the part API's. */
  tus_upload_id: string | null;
};

export type Thumbnail = { source: "auto" | "custom"; url: string };
export type Rendition = { resolution: string; width: number; height: number };
export type Playback = { hls: string; mp4: string | null };
export type VideoError = { code: "invalid_source" | "encoding_failed"; message: string };

export type Video = {
  id: string;
  projectId: string;
  title: string | null;
  status: VideoStatus;
  visibility: Visibility;
  thumbnail: Thumbnail;
  /** Seconds, and the source's display size: null until the source has been probed. */
  duration: number | null;
  width: number | null;
  height: number | null;
  /** Lowest first; empty, and `playback` null, until the video is ready. */
  renditions: Rendition[];
  playback: Playback | null;
  /** Why the video is errored; null unless it is. */
  error: VideoError | null;
  createdAt: string;
  updatedAt: string;
};

/** How long a started upload completion holds the video before another may take over. */
export const COMPLETION_LEASE_MS = 5 * 60 * 1000;
/** How long an upload session accepts parts. */
export const UPLOAD_SESSION_MS = 24 * 60 * 60 * 1000;

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

export function toVideo(row: VideoRow, thumbnail: Thumbnail, now: number = Date.now()): Video {
  return {
    id: row.id,
    projectId: row.project_id,
    title: row.title,
    status: effectiveStatus(row, now),
    visibility: row.visibility,
    thumbnail,
    // No source is probed or encoded yet (the encoding pipeline is issue 18): every video is as
    // section 5 describes one before its probe.
    duration: null,
    width: null,
    height: null,
    renditions: [],
    playback: null,
    error: null,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}
