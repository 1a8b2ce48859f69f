import type { Context } from "hono";
import { type BodyKind, bodyBytes, mediaType } from "../http/body";
import type { AppEnv } from "../http/context";
import { ApiError } from "../http/errors";
import { parseSubRip } from "./subrip";
import { type Parsed, parseWebVtt, toWebVtt } from "./webvtt";

/** The media types a track is uploaded as (parameters ignored), and how each is read. */
const FORMATS = {
  "text/vtt": parseWebVtt,
  "application/x-subrip": parseSubRip,
} as const satisfies Record<string, (text: string) => Parsed>;
type CaptionType = keyof typeof FORMATS;
export const CAPTION_TYPES = Object.keys(FORMATS) as CaptionType[];

/** 2 MiB: a long film's captions take a few hundred KiB. */
export const MAX_CAPTIONS_BYTES = 2 * 1024 * 1024;

const isCaptionType = (type: string): type is CaptionType => type in FORMATS;

export const CAPTIONS_BODY: BodyKind = { accepts: isCaptionType, maxBytes: MAX_CAPTIONS_BYTES };

/**
 * Reads a caption upload, in the order docs/captions-and-embed.md gives: a Content-Type other than
 * WebVTT's or SubRip's → 415, unread; more than 2 MiB, declared or streamed → 413, without reading
 * past the limit; bytes that are not UTF-8, or a file that does not parse as its type, or cues out
 * of order or ending before they start → 400 invalid_captions, naming the line at fault. Returns
 * the WebVTT to store: an uploaded WebVTT file as it came, a SubRip file as WebVTT with the same
 * cues and the same text.
 */
export async function readCaptionsUpload<E extends AppEnv>(c: Context<E>): Promise<Uint8Array> {
  const type = mediaType(c.req.header("content-type"));
  if (!isCaptionType(type)) {
    throw new ApiError("unsupported_media_type", {
      message: `Content-Type must be one of ${CAPTION_TYPES.join(", ")}.`,
    });
  }
  const bytes = await bodyBytes(c, CAPTIONS_BODY);
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true }).decode(bytes);
  } catch {
    throw new ApiError("invalid_captions", { details: [{ path: "body", message: "not UTF-8" }] });
  }
  const parsed = FORMATS[type](text);
  if (!parsed.ok) throw new ApiError("invalid_captions", { details: [{ path: "body", message: parsed.problem }] });
  return type === "text/vtt" ? bytes : new TextEncoder().encode(toWebVtt(parsed.cues));
}
