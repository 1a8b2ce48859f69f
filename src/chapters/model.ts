import type { ErrorDetail } from "../http/errors";

/**
 * A video's chapters (docs/chapters.md): each where it starts, in seconds (whole milliseconds),
 * and its title. A list holds 1 to MAX_CHAPTERS, the first at 0, each after the one before it.
 */
export type Chapter = { start: number; title: string };

export const MAX_CHAPTERS = 100;
export const MAX_TITLE_LENGTH = 100;

/** The chapters a video holds, as saved, and when they were saved. */
export type SavedChapters = { chapters: Chapter[]; updatedAt: string };

export type ChaptersRow = {
  video_id: string;
  project_id: string;
  /** JSON: the Chapter[] as saved. */
  chapters: string;
  updated_at: string;
};

/** A row of the chapters table as the list it holds; null for no row. */
export function savedChapters(row: ChaptersRow | null | undefined): SavedChapters | null {
  return row ? { chapters: JSON.parse(row.chapters) as Chapter[], updatedAt: row.updated_at } : null;
}

/**
 * The chapters a video shows: those that start before its duration, or all of them while that is
 * not known. A list saved before the duration was known (while the video was uploading or waiting
 * to be probed) may hold chapters at or past it: they stay saved as they were, and are shown
 * nowhere (not by GET, not in chapters.vtt, not on the embed page). The first chapter starts at 0
 * and a known duration is above 0, so one at least is always left.
 */
export function chaptersWithin(chapters: Chapter[], duration: number | null): Chapter[] {
  return duration === null ? chapters : chapters.filter((chapter) => chapter.start < duration);
}

/**
 * What refuses a list for a video of `duration` seconds: a `details` entry for every chapter that
 * starts at or past it (none while the duration is not known).
 */
export function pastTheEnd(chapters: Chapter[], duration: number | null): ErrorDetail[] {
  if (duration === null) return [];
  return chapters.flatMap((chapter, index) =>
    chapter.start < duration
      ? []
      : [{ path: `chapters.${index}.start`, message: `must be below the video's duration (${duration} s)` }],
  );
}
