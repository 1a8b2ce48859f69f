import type { Playback } from "../videos/model";

/** Playback is served by this Worker under this path (contract section 12). */
export const PLAY_PATH = "/play";
export const EMBED_PATH = "/embed";

/**
 * A video's playback URLs; `subject` is its id, or a playback token that stands in for it, so every
 * relative URI inside the playlists resolves under the same prefix either way.
 */
export function playbackUrls(origin: string, subject: string, mp4: boolean): Playback {
  const root = `${origin}${PLAY_PATH}/${subject}`;
  return { hls: `${root}/master.m3u8`, mp4: mp4 ? `${root}/video.mp4` : null };
}

/**
 * The video's current thumbnail under `subject` (contract section 12): the URL a playback token
 * gives for a private video's picture, and the embed page's poster.
 */
export function playbackThumbnailUrl(origin: string, subject: string): string {
  return `${origin}${PLAY_PATH}/${subject}/thumbnail`;
}
