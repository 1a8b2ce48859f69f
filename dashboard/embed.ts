import type { Video } from "./api";
import { CAPTIONS_EXTENSIONS, type CaptionsType } from "./enums";

/** The origin of the service's public URLs (the embed page, `/play/`): the video's thumbnail URL's. */
export function publicOriginOf(video: Pick<Video, "thumbnail">): string {
  return new URL(video.thumbnail.url).origin;
}

/**
 * The embed code of a video (docs/encoding.md#playback-tokens-and-the-embed-page): an iframe of
 * `/embed/<id>`, or of a token for a private one.
 */
export function embedCode(origin: string, subject: string, title: string): string {
  const escaped = title.replaceAll("&", "&amp;").replaceAll('"', "&quot;").replaceAll("<", "&lt;");
  return `<iframe src="${origin}/embed/${subject}" title="${escaped}" width="640" height="360" style="border:0;aspect-ratio:16/9;width:100%;height:auto" allow="autoplay; fullscreen; picture-in-picture" allowfullscreen></iframe>`;
}

/** The media type a captions file is sent with, by its extension; null for another kind of file. */
export function captionsType(fileName: string): CaptionsType | null {
  const lower = fileName.toLowerCase();
  const found = Object.entries(CAPTIONS_EXTENSIONS).find(([, extension]) => lower.endsWith(extension));
  return found ? (found[0] as CaptionsType) : null;
}

/** Lifetimes offered for a playback link, in seconds (the API takes 60 to 86,400). */
export const LINK_LIFETIMES: [label: string, seconds: number][] = [
  ["1 hour", 3600],
  ["6 hours", 6 * 3600],
  ["24 hours", 86400],
  ["10 minutes", 600],
];
