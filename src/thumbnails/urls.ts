import type { Thumbnail } from "../videos/model";

/** Public thumbnails are served by this Worker under this path, straight from R2. */
export const THUMBNAIL_PATH = "/thumbnails";

/** R2 key of the automatic poster frame, written by the encoding pipeline. */
export function posterKey(projectId: string, videoId: string): string {
  return `thumbnails/${projectId}/${videoId}/poster.jpg`;
}

export function publicThumbnailUrl(origin: string, key: string): string {
  return `${origin}${THUMBNAIL_PATH}/${key.slice("thumbnails/".length)}`;
}

/** R2 key of a custom thumbnail: a new name for every upload, so its URL can be cached forever. */
export function customThumbnailKey(projectId: string, videoId: string, name: string): string {
  return `thumbnails/${projectId}/${videoId}/${name}`;
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
