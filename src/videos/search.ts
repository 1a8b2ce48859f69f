import { ApiError } from "../http/errors";
import type { VideoStatus, Visibility } from "./model";
import { MAX_METADATA_PAIRS, METADATA_KEY } from "./schemas";

/**
 * What the video list keeps (docs/api-rules.md#videos-and-their-uploads,
 * docs/import-clips-search.md#search-get-v1videos), each part optional, all combined.
 */
export type VideoFilter = {
  status?: VideoStatus | undefined;
  visibility?: Visibility | undefined;
  /** A video must have every one. */
  tags?: string[] | undefined;
  /** Exact values, by key, sorted by key. */
  metadata?: [string, string][] | undefined;
  /** An FTS5 query over the title's words (`searchQuery`). */
  search?: string | undefined;
  /** Canonical ISO timestamps, each exclusive. */
  createdAfter?: string | undefined;
  createdBefore?: string | undefined;
};

const METADATA_PARAM = /^metadata\[(.*)\]$/s;
const WORD = /[\p{L}\p{N}\p{M}]+/gu;
const MAX_WORDS = 10;

/**
 * The `metadata[<key>]=<value>` filters of a query, sorted by key; a bad key, a repeated one, a
 * value over 500 characters or more than 20 of them → invalid_query.
 */
export function metadataFilters(params: URLSearchParams): [string, string][] {
  const filters = new Map<string, string>();
  for (const [name, value] of params) {
    const match = METADATA_PARAM.exec(name);
    if (!match) continue;
    const key = match[1] ?? "";
    if (!METADATA_KEY.test(key) || filters.has(key) || value.length > 500)
      throw new ApiError("invalid_query", {
        details: [
          {
            path: name,
            message: "metadata[<key>]=<value>: a key of 1–40 [A-Za-z0-9_.-], once, a value of at most 500 characters",
          },
        ],
      });
    filters.set(key, value);
  }
  if (filters.size > MAX_METADATA_PAIRS) {
    throw new ApiError("invalid_query", {
      details: [{ path: "metadata", message: `at most ${MAX_METADATA_PAIRS} filters` }],
    });
  }
  return [...filters].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
}

/**
 * The FTS5 query for a `search=` text: each of its words as a quoted prefix term (so nothing the
 * client sends is FTS syntax), all required. Words are what the title index's unicode61 tokenizer
 * makes tokens of; a text with none, or more than 10, → invalid_query.
 */
export function searchQuery(search: string): string {
  const words = search.match(WORD) ?? [];
  if (words.length === 0 || words.length > MAX_WORDS) {
    throw new ApiError("invalid_query", {
      details: [{ path: "search", message: `1–${MAX_WORDS} words of letters or digits` }],
    });
  }
  return words.map((word) => `"${word}"*`).join(" ");
}

/** The filter in one canonical spelling: what a cursor is bound to, so a cursor of another filter is refused. */
export function filterScope(filter: VideoFilter): unknown[] {
  return [
    filter.status ?? null,
    filter.visibility ?? null,
    [...new Set(filter.tags ?? [])].sort(),
    filter.metadata ?? [],
    filter.search ?? null,
    filter.createdAfter ?? null,
    filter.createdBefore ?? null,
  ];
}
