import { z } from "@hono/zod-openapi";
import { utcTime } from "../lib/time";
/**
 * HTTP conditional requests (RFC 9110 §13) for the public media answers: which of 200, 304 or 412
 * a GET gets from its If-Match, If-Unmodified-Since, If-None-Match and If-Modified-Since headers.
 * A header that does not parse (`garbage`, `"a`, `yesterday`) is ignored, as if absent
 * (docs/encoding.md#playback-tokens-and-the-embed-page): a client's mistake never costs more than a
 * full answer.
 */

export type EntityTag = { weak: boolean; opaque: string };
/** A parsed If-Match or If-None-Match: `*`, or a list of entity-tags. */
export type EntityTagCondition = "*" | EntityTag[];

// entity-tag = [ "W/" ] DQUOTE *etagc DQUOTE; etagc = %x21 / %x23-7E / obs-text
const ENTITY_TAG = /^(W\/)?"([\x21\x23-\x7e\x80-\xff]*)"$/;

/** `*` or a comma-separated list of entity-tags (empty elements allowed); null when malformed. */
export function parseEntityTags(header: string | null | undefined): EntityTagCondition | null {
  if (header === null || header === undefined) return null;
  const text = header.trim();
  if (text === "*") return "*";
  const tags: EntityTag[] = [];
  for (const element of text.split(",")) {
    const item = element.trim();
    if (item === "") continue;
    const match = ENTITY_TAG.exec(item);
    if (!match) return null;
    tags.push({ weak: match[1] !== undefined, opaque: match[2] ?? "" });
  }
  return tags.length > 0 ? tags : null;
}

const DAY = "(Mon|Tue|Wed|Thu|Fri|Sat|Sun)";
const MONTH = "(Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)";
const TIME = "(\\d{2}):(\\d{2}):(\\d{2})";
const MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];
/** IMF-fixdate, then the two obsolete forms a recipient must still accept (RFC 9110 §5.6.7). */
const IMF_FIXDATE = new RegExp(`^${DAY}, (\\d{2}) ${MONTH} (\\d{4}) ${TIME} GMT$`);
const RFC_850 = new RegExp(
  `^(?:Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday), (\\d{2})-${MONTH}-(\\d{2}) ${TIME} GMT$`,
);
const ASCTIME = new RegExp(`^${DAY} ${MONTH} ( \\d|\\d{2}) ${TIME} (\\d{4})$`);

type DateParts = { day: string; month: string; year: number; time: string[] };

function dateParts(text: string): DateParts | null {
  const fix = IMF_FIXDATE.exec(text);
  if (fix) return { day: fix[2] ?? "", month: fix[3] ?? "", year: Number(fix[4]), time: fix.slice(5, 8) };
  const old = RFC_850.exec(text);
  if (old) {
    // A two-digit year more than 50 years ahead is in the past century (RFC 9110 §5.6.7).
    const thisYear = new Date().getUTCFullYear();
    const year = Math.floor(thisYear / 100) * 100 + Number(old[3]);
    return {
      day: old[1] ?? "",
      month: old[2] ?? "",
      year: year > thisYear + 50 ? year - 100 : year,
      time: old.slice(4, 7),
    };
  }
  const asc = ASCTIME.exec(text);
  if (asc) return { day: (asc[3] ?? "").trim(), month: asc[2] ?? "", year: Number(asc[7]), time: asc.slice(4, 7) };
  return null;
}

/** An HTTP-date in milliseconds, or null when the text is not one. */
export function parseHttpDate(header: string | null | undefined): number | null {
  const parts = header === null || header === undefined ? null : dateParts(header.trim());
  if (!parts) return null;
  const [h, m, s] = parts.time.map(Number) as [number, number, number];
  return utcTime(parts.year, MONTHS.indexOf(parts.month) + 1, Number(parts.day), h, m, s);
}

/** An HTTP-date for a header (IMF-fixdate). */
export function httpDate(time: number | Date): string {
  return new Date(time).toUTCString();
}

const strongMatch = (a: EntityTag, b: EntityTag) => !a.weak && !b.weak && a.opaque === b.opaque;
const weakMatch = (a: EntityTag, b: EntityTag) => a.opaque === b.opaque;

/**
 * What the representation is, to compare the conditions against. One made on each request (a
 * playlist put together from several sources) may have no modification date: the date conditions
 * are then ignored, as RFC 9110 §13.1.3–4 say.
 */
export type Validators = { etag: string; lastModified?: number };

/**
 * The status a GET or HEAD of an existing representation answers, in RFC 9110 §13.2.2's order:
 * If-Match (else If-Unmodified-Since) may fail it with 412; If-None-Match (else
 * If-Modified-Since) may answer 304. Dates compare at one-second resolution, as HTTP-dates have.
 */
export function preconditionStatus(headers: Headers, validators: Validators): 200 | 304 | 412 {
  const current = parseEntityTags(validators.etag);
  const tag = current !== null && current !== "*" ? current[0] : undefined;
  const modified = validators.lastModified === undefined ? null : Math.floor(validators.lastModified / 1000) * 1000;

  const ifMatch = parseEntityTags(headers.get("if-match"));
  if (ifMatch !== null) {
    if (ifMatch !== "*" && !(tag && ifMatch.some((t) => strongMatch(t, tag)))) return 412;
  } else {
    const since = parseHttpDate(headers.get("if-unmodified-since"));
    if (since !== null && modified !== null && modified > since) return 412;
  }

  const ifNoneMatch = parseEntityTags(headers.get("if-none-match"));
  if (ifNoneMatch !== null) {
    if (ifNoneMatch === "*" || (tag && ifNoneMatch.some((t) => weakMatch(t, tag)))) return 304;
  } else {
    const since = parseHttpDate(headers.get("if-modified-since"));
    if (since !== null && modified !== null && modified <= since) return 304;
  }
  return 200;
}

/**
 * Whether a `Range` may be honoured under the request's `If-Range` (RFC 9110 §13.1.5): true without
 * one; else only when it names the current representation: an entity-tag that strongly matches
 * the ETag (a weak one never does), or an HTTP-date equal to the last change (at one-second
 * resolution). Anything else, a malformed value included, means the whole file is sent (200).
 */
export function ifRangeHolds(headers: Headers, validators: Validators): boolean {
  const header = headers.get("if-range");
  if (header === null) return true;
  const text = header.trim();
  if (text.startsWith('"') || text.startsWith("W/")) {
    const tags = parseEntityTags(text);
    const current = parseEntityTags(validators.etag);
    if (tags === null || tags === "*" || tags.length !== 1 || current === null || current === "*") return false;
    const [tag] = tags;
    const [etag] = current;
    return tag !== undefined && etag !== undefined && strongMatch(tag, etag);
  }
  const date = parseHttpDate(text);
  // A date names a version only where the answer has a date (a text made per request may not).
  const { lastModified } = validators;
  return date !== null && lastModified !== undefined && date === Math.floor(lastModified / 1000) * 1000;
}

/** The conditional request headers preconditionStatus reads, for the OpenAPI document of a route that uses it. */
export const ConditionalHeaders = z.object({
  "if-none-match": z.string().optional().openapi({
    description: "ETags the client holds (or `*`): 304 Not Modified when one is current",
    example: '"9b2cf535f27731c974343645a3985328"',
  }),
  "if-modified-since": z.string().optional().openapi({
    description: "An HTTP date, read when If-None-Match is absent: 304 when nothing changed since",
    example: "Sun, 22 Nov 2026 06:00:00 GMT",
  }),
  "if-match": z.string().optional().openapi({
    description: "ETags (or `*`) the resource must match, else 412 precondition_failed",
    example: '"9b2cf535f27731c974343645a3985328"',
  }),
  "if-unmodified-since": z.string().optional().openapi({
    description: "An HTTP date, read when If-Match is absent: 412 precondition_failed when changed since",
    example: "Sun, 22 Nov 2026 06:00:00 GMT",
  }),
});
