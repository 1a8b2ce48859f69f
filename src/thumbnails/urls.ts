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

export function thumbnailOf(origin: string, video: { project_id: string; id: string }): Thumbnail {
  return { source: "auto", url: publicThumbnailUrl(origin, posterKey(video.project_id, video.id)) };
}
