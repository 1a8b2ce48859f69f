import { createMiddleware } from "hono/factory";
import type { AppEnv } from "./context";
import { ApiError } from "./errors";
import { documented } from "./route";

/** A run of percent-escapes: the bytes of one or more characters. */
const ESCAPES = /(?:%[0-9A-Fa-f]{2})+/g;

/** Whether every run of percent-escapes in `text` is UTF-8 (no stray byte, no encoded surrogate). */
function escapesAreUtf8(text: string): boolean {
  for (const [run] of text.matchAll(ESCAPES)) {
    try {
      decodeURIComponent(run);
    } catch {
      return false;
    }
  }
  return true;
}

/** A parameter's name as a detail's path: decoded when it decodes, else as sent. */
function parameterName(raw: string): string {
  try {
    return decodeURIComponent(raw.replaceAll("+", " "));
  } catch {
    return raw;
  }
}

/**
 * The name of the first query parameter whose name or value is percent-encoded bytes that are not
 * UTF-8 (`%C3%28`, `%FF`, `%ED%A0%80`), or null. Decoders read such bytes altered, each its own way
 * (Hono keeps `%FF` as those three characters, URLSearchParams makes it U+FFFD), so the text used
 * would not be the text sent. A `%` that starts no escape (`100%`) is the character itself, as
 * URL decoding reads it.
 */
export function malformedQueryParameter(url: string): string | null {
  const query = new URL(url).search.slice(1);
  if (!query.includes("%")) return null;
  for (const pair of query.split("&")) {
    if (!escapesAreUtf8(pair)) return parameterName(pair.split("=")[0] ?? "");
  }
  return null;
}

/**
 * For routes whose query carries text (a search, tags, a label to store): a parameter that is not
 * percent-encoded UTF-8 is `400 invalid_query`, naming it, instead of being read as another text.
 */
export const wellFormedQuery = documented(
  createMiddleware<AppEnv>(async (c, next) => {
    const name = malformedQueryParameter(c.req.url);
    if (name !== null) {
      throw new ApiError("invalid_query", { details: [{ path: name, message: "must be percent-encoded UTF-8" }] });
    }
    await next();
  }),
  () => ["invalid_query"],
);
