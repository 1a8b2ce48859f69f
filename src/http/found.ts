import { parseUlid } from "../lib/ulid";
import { ApiError, type ErrorCode } from "./errors";

/**
 * The one rule for an id in a path: it is parsed as a ULID (case-insensitively) and looked up; text
 * that is not a ULID, or a lookup that finds nothing (null or false), answers `notFound`, never a
 * 500. Returns what the lookup found.
 */
export async function found<T>(
  notFound: ErrorCode,
  rawId: string,
  lookup: (id: string) => Promise<T | null | false>,
): Promise<T> {
  const id = parseUlid(rawId);
  const result = id ? await lookup(id) : null;
  if (result === null || result === false) throw new ApiError(notFound);
  return result;
}
