import { type Cue, cuesMeeting, escapeCueText, toWebVtt } from "../captions/webvtt";
import { type Chapter, chaptersWithin, type SavedChapters } from "./model";

/**
 * One cue per chapter the video shows (`chaptersWithin`), from its start to the next one's, the
 * last to `duration` (seconds), its text the title. Cue times are whole milliseconds.
 */
export function chapterCues(chapters: Chapter[], duration: number): Cue[] {
  const shown = chaptersWithin(chapters, duration);
  return shown.map((chapter, index) => ({
    start: Math.round(chapter.start * 1000),
    end: Math.round((shown[index + 1]?.start ?? duration) * 1000),
    settings: "",
    text: escapeCueText(chapter.title),
  }));
}

/**
 * `/play/<x>/chapters.vtt`: the video's chapters as a WebVTT chapters track, and its date (when
 * they were saved). With `range` (a playback token bound to a span, in seconds), only the cues
 * that meet it. Null when there is nothing to serve: no chapters, or no duration yet to end the
 * last one at.
 */
export function chaptersTrack(
  saved: SavedChapters | null,
  duration: number | null,
  range: { start: number; end: number } | null,
): { text: string; lastModified: number } | null {
  if (saved === null || duration === null || duration <= 0) return null;
  const cues = chapterCues(saved.chapters, duration);
  return {
    text: toWebVtt(range === null ? cues : cuesMeeting(cues, range)),
    lastModified: Date.parse(saved.updatedAt),
  };
}
