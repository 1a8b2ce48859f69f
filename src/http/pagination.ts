import { z } from "@hono/zod-openapi";
import { decodeCursor, encodeCursor, type Position } from "../lib/cursor";
import type { RotatingSecret } from "../lib/secrets";
import { ApiError, type ErrorCode } from "./errors";
import { decimalInt } from "./schemas";

export const DEFAULT_PAGE_SIZE = 20;
export const MAX_PAGE_SIZE = 100;

export const PageQuerySchema = z.object({
  limit: decimalInt(1, MAX_PAGE_SIZE, `Page size, 1–${MAX_PAGE_SIZE}`)
    .optional()
    .openapi({ default: DEFAULT_PAGE_SIZE }),
  cursor: z.string().optional().openapi({ description: "nextCursor of the previous page" }),
});

export type Page = { limit: number; after: Position | null };

/** Codes of the page query's fields, for a route's validation hook (a repeated one, say). */
export const PAGE_QUERY_CODES = { limit: "invalid_limit", cursor: "invalid_cursor" } satisfies Record<
  string,
  ErrorCode
>;

/**
 * Where a listing's cursors are valid: signed with the configured secret over `scope`, which names
 * the listing (its owner and filter), so a cursor of another listing is refused.
 */
export type CursorScope = { secret: RotatingSecret; scope: string };

/** Reads the page query (its `limit` validated by the schema), answering invalid_cursor for a cursor not ours. */
export async function parsePage(
  query: { limit?: number | undefined; cursor?: string | undefined },
  cursors: CursorScope,
): Promise<Page> {
  const limit = query.limit ?? DEFAULT_PAGE_SIZE;
  let after: Position | null = null;
  if (query.cursor !== undefined) {
    after = await decodeCursor(cursors.secret, cursors.scope, query.cursor);
    if (!after) throw new ApiError("invalid_cursor");
  }
  return { limit, after };
}

/** Splits a `limit + 1` row fetch into a page and the cursor of the next one. */
export async function pageOf<Row extends { created_at: string; id: string }>(
  rows: Row[],
  limit: number,
  cursors: CursorScope,
) {
  const data = rows.slice(0, limit);
  const last = data[data.length - 1];
  const nextCursor =
    rows.length > limit && last
      ? await encodeCursor(cursors.secret.current, cursors.scope, { createdAt: last.created_at, id: last.id })
      : null;
  return { data, nextCursor };
}
