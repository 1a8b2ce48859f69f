import type { Schemas, Video } from "./api";
import type { Visibility } from "./enums";

/** How often an open videos list is read again (docs/dashboard.md: a status shows within 5 s of its change). */
export const POLL_MS = 3000;

/** Where the list is: the cursors of the pages before, and the current page's (null: the first). */
export class PageCursor {
  constructor(
    private readonly before: readonly (string | null)[] = [],
    readonly current: string | null = null,
  ) {}

  get canGoBack(): boolean {
    return this.before.length > 0;
  }

  forward(next: string): PageCursor {
    return new PageCursor([...this.before, this.current], next);
  }

  back(): PageCursor {
    if (this.before.length === 0) return this;
    return new PageCursor(this.before.slice(0, -1), this.before[this.before.length - 1] ?? null);
  }
}

export type BulkOutcome = {
  action: "delete" | Visibility;
  /** One line per video: its title and what happened to it. */
  lines: { id: string; title: string; ok: boolean; message: string }[];
  /** The whole request failed: its message. */
  error: string | null;
};

/** Each item's result of a bulk request, in words, by the video's title where the list knows it. */
export function summarize(
  action: "delete" | Visibility,
  results: Schemas["VideoBulkResult"][],
  videos: readonly Video[],
): BulkOutcome {
  const done = action === "delete" ? "Deleted" : `Made ${action}`;
  const lines = results.map((result) => {
    const video = videos.find((candidate) => candidate.id.toUpperCase() === result.id.toUpperCase());
    const title = video?.title ?? result.id;
    return result.ok
      ? { id: result.id, title, ok: true, message: done }
      : { id: result.id, title, ok: false, message: `Failed: ${result.error.message}` };
  });
  return { action, lines, error: null };
}

/** Tags as a person types them: split at commas, trimmed, empty ones and repeats dropped. */
export function parseTags(text: string): string[] {
  return [
    ...new Set(
      text
        .split(",")
        .map((tag) => tag.trim())
        .filter((tag) => tag !== ""),
    ),
  ];
}
