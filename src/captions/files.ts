import { ApiError } from "../http/errors";
import { canonicalLanguage } from "../lib/language";
import { segmentOfPlaylist, subtitlePlaylist, subtitleSegment } from "./hls";
import type { CaptionRow } from "./model";
import { type SecondsRange, webVttMeeting } from "./webvtt";

/** Which file of which track a path under `/play/<x>/` names (`captionPaths`), the language in its canonical case. */
export type CaptionFile = { language: string; kind: "track" | "playlist" | "segment" };

const PATHS: [RegExp, CaptionFile["kind"]][] = [
  [/^captions\/([A-Za-z0-9-]+)\.vtt$/, "track"],
  [/^captions\/([A-Za-z0-9-]+)\.m3u8$/, "playlist"],
  [/^captions\/([A-Za-z0-9-]+)\/seg_00000\.vtt$/, "segment"],
];

/** The caption file `path` names, or null when it names none (a malformed path or language). */
export function captionFile(path: string): CaptionFile | null {
  for (const [pattern, kind] of PATHS) {
    const language = canonicalLanguage(pattern.exec(path)?.[1] ?? "");
    if (language) return { language, kind };
  }
  return null;
}

/**
 * A track's file as made for this request, from the track and the video: its VOD subtitle playlist
 * (one segment as long as the video), that segment (the stored WebVTT with X-TIMESTAMP-MAP tying
 * its time 0 to `mpegts`, where the video's segments start their MPEG-TS timeline), or the track
 * itself cut to a range. With `range` (a ranged playback token's, in seconds), the track and the
 * segment hold only the cues that meet it (`webVttMeeting`); the playlist holds no cue and stays
 * as it is. Each changes only when the track does: that is its date.
 */
export async function captionTrackFile(
  media: R2Bucket,
  video: { duration: number | null },
  track: CaptionRow,
  kind: CaptionFile["kind"],
  mpegts: number,
  range: SecondsRange | null,
): Promise<{ text: string; lastModified: number }> {
  const lastModified = Date.parse(track.updated_at);
  if (kind === "playlist") {
    // A playable video has been probed; one without a duration has no timeline to put captions on.
    if (!video.duration || video.duration <= 0) throw new ApiError("not_found");
    return { text: subtitlePlaylist(video.duration, segmentOfPlaylist(track.language)), lastModified };
  }
  const stored = await media.get(track.object_key);
  if (!stored) throw new ApiError("not_found");
  const text = range === null ? await stored.text() : webVttMeeting(await stored.text(), range);
  return { text: kind === "segment" ? subtitleSegment(text, mpegts) : text, lastModified };
}
