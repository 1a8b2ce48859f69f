import type { Chapter } from "./api";
import type { FormProblems } from "./errors";

/** One row of the `Chapters` editor as typed: its `Start` and `Title` fields, and a key for the list. */
export type ChapterRow = { key: number; start: string; title: string };

let keys = 0;

/** A new row: the first starts at 0 (every list does), the others empty. */
export function newRow(first: boolean): ChapterRow {
  keys += 1;
  return { key: keys, start: first ? "0" : "", title: "" };
}

/** The saved chapters as rows, their starts in seconds as the API gives them. */
export function rowsOf(chapters: Chapter[]): ChapterRow[] {
  return chapters.map((chapter) => {
    keys += 1;
    return { key: keys, start: String(chapter.start), title: chapter.title };
  });
}

/**
 * A typed start as seconds: `90`, `62.5`, or minutes and seconds `1:30` (hours too, `1:02:03.5`);
 * null when it is none of these. Whole milliseconds stay exact; the API says what else is wrong.
 */
export function parseSeconds(text: string): number | null {
  const typed = text.trim();
  if (/^\d+(\.\d+)?$/.test(typed)) return Number(typed);
  const clock = /^(?:(\d+):)?(\d{1,2}):(\d{1,2})(\.\d+)?$/.exec(typed);
  if (!clock) return null;
  const [, hours = "0", minutes = "0", seconds = "0", fraction = ""] = clock;
  if (Number(seconds) >= 60 || (clock[1] !== undefined && Number(minutes) >= 60)) return null;
  const whole = (Number(hours) * 60 + Number(minutes)) * 60 + Number(seconds);
  // Whole seconds plus the fraction as written, so that 1:02.345 is 62.345 and not 62.345000000000006.
  return fraction === "" ? whole : Number(`${whole}${fraction}`);
}

/** The field names a refusal's `details` may point at, for rows `0 … count - 1` (`chapters.3.start`). */
export function chapterFields(count: number): string[] {
  return [
    "chapters",
    ...Array.from({ length: count }, (_, i) => [`chapters.${i}.start`, `chapters.${i}.title`]).flat(),
  ];
}

/** The list to save, or what keeps it from being sent: a start that is not a time, next to its field. */
export function chaptersOf(rows: ChapterRow[]): { chapters: Chapter[] } | { problems: FormProblems } {
  const fields: Record<string, string> = {};
  const chapters = rows.map((row, index) => {
    const start = parseSeconds(row.start);
    if (start === null)
      fields[`chapters.${index}.start`] = "Type the start in seconds (90) or as minutes:seconds (1:30).";
    return { start: start ?? 0, title: row.title };
  });
  return Object.keys(fields).length > 0 ? { problems: { form: null, fields } } : { chapters };
}
