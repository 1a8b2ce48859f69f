import { posterKey, thumbnailUrlPath } from "../lib/storage-keys";

// The public URLs of a video's media: playback under /play, embeds under /embed, public thumbnails
// under /thumbnails. The routes that serve them and the objects that show them read these.

/** A video's thumbnail as the API shows it: its custom image or the poster frame. */
export type Thumbnail = { source: "auto" | "custom"; url: string };
/** A video's playback URLs as the API shows them. */
export type Playback = { hls: string; mp4: string | null; m4a: string | null };

/** Playback is served by this Worker under this path (docs/encoding.md#playback-tokens-and-the-embed-page). */
export const PLAY_PATH = "/play";
export const EMBED_PATH = "/embed";

/**
 * A video's playback URLs; `subject` is its id, or a playback token that stands in for it, so every
 * relative URI inside the playlists resolves under the same prefix either way. `files` says which
 * of the MP4 and the M4A (docs/encoding.md#playback-tokens-and-the-embed-page, docs/audio-only.md) it has.
 */
export function playbackUrls(origin: string, subject: string, files: { mp4: boolean; m4a: boolean }): Playback {
  const root = `${origin}${PLAY_PATH}/${subject}`;
  return {
    hls: `${root}/master.m3u8`,
    mp4: files.mp4 ? `${root}/video.mp4` : null,
    m4a: files.m4a ? `${root}/audio.m4a` : null,
  };
}

/** Which of the MP4 and the M4A a video row has. */
export function filesOf(row: { has_mp4: number | null; has_m4a: number | null }): { mp4: boolean; m4a: boolean } {
  return { mp4: row.has_mp4 === 1, m4a: row.has_m4a === 1 };
}

/**
 * The video's current thumbnail under `subject`
 * (docs/encoding.md#playback-tokens-and-the-embed-page): the URL a playback token gives for a
 * private video's picture, and the embed page's poster.
 */
export function playbackThumbnailUrl(origin: string, subject: string): string {
  return `${origin}${PLAY_PATH}/${subject}/thumbnail`;
}

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
