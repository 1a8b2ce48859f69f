import {
  allowedOriginsOf,
  effectiveStatus,
  isPlayable,
  type Rendition,
  type VideoError,
  type VideoRow,
  type VideoStatus,
  type Visibility,
} from "./model";
import type { Playback, Thumbnail } from "./urls";

// The video object the API shows, made from its row and its public URLs: what the routes answer
// with, what webhooks carry, and what the schemas describe.

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
  /**
   * Set once the video is playable (docs/encoding.md#long-videos-playable-in-seconds): while
   * processing, `mp4` and `m4a` are null.
   */
  playback: Playback | null;
  /** Why the video is errored; null unless it is. */
  error: VideoError | null;
  tags: string[];
  metadata: Record<string, string>;
  allowedOrigins: string[];
  createdAt: string;
  updatedAt: string;
};

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
