import { posterKey, thumbnailUrlPath } from "../lib/storage-keys";
import type { Thumbnail } from "../videos/model";

/** Public thumbnails are served by this Worker under this path, straight from R2. */
export const THUMBNAIL_PATH = "/thumbnails";

export function publicThumbnailUrl(origin: string, key: string): string {
  return `${origin}${THUMBNAIL_PATH}/${thumbnailUrlPath(key)}`;
}

/** The video's thumbnail: its custom image when it has one, else the automatic poster frame. */
export function thumbnailOf(
  origin: string,
  video: { project_id: string; id: string; custom_thumbnail_key: string | null },
): Thumbnail {
  return video.custom_thumbnail_key
    ? { source: "custom", url: publicThumbnailUrl(origin, video.custom_thumbnail_key) }
    : { source: "auto", url: publicThumbnailUrl(origin, posterKey(video.project_id, video.id)) };
}

/** The R2 key of the video's current thumbnail: its custom image when it has one, else the automatic poster frame. */
export function thumbnailKeyOf(video: { project_id: string; id: string; custom_thumbnail_key: string | null }): string {
  return video.custom_thumbnail_key ?? posterKey(video.project_id, video.id);
}
