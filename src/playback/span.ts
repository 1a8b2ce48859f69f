import { frameTime, type Plan, segmentCount, segmentFrames } from "../../media-plan/plan.mjs";
import { ApiError } from "../http/errors";
import type { TokenClaims } from "./tokens";

/**
 * A span of a video in seconds, played as the segments that cover it: a playlist's `start`/`end` or
 * a token's range (a clip played without encoding,
 * docs/import-clips-search.md#clips-without-encoding; a clip made a video of its own is
 * `videos/clips.ts`). Pure: the routes read the query and the token, and list what this says.
 */
export type Span = { start: number; end: number };

const SECONDS = /^(?:0|[1-9][0-9]{0,5})(?:\.[0-9]{1,6})?$/;

function badRange(message: string): ApiError {
  return new ApiError("invalid_query", { details: [{ path: "start", message }] });
}

/** One `start` or `end` query value: seconds, once, or absent; else invalid_query. */
function seconds(values: string[] | undefined, name: string): number | undefined {
  if (values === undefined) return undefined;
  const [value] = values;
  if (values.length !== 1 || value === undefined || !SECONDS.test(value)) {
    throw new ApiError("invalid_query", { details: [{ path: name, message: "must be a number of seconds, once" }] });
  }
  return Number(value);
}

/** Whether a token binds a range: then no file holds anything of the video outside it (docs/import-clips-search.md). */
export function bindsRange(bound: TokenClaims): boolean {
  return bound.start !== undefined || bound.end !== undefined;
}

/**
 * The range a token binds within a video of `duration` seconds: from its start (else 0) to its end
 * (else the duration), never past the duration; null for a token that binds none (and a video id).
 * Nothing of the video outside it is served under the token (docs/import-clips-search.md).
 */
export function tokenSpan(bound: TokenClaims, duration: number): Span | null {
  if (!bindsRange(bound)) return null;
  return { start: bound.start ?? 0, end: Math.min(bound.end ?? duration, duration) };
}

/**
 * The span a playback asks for: the query's `start`/`end` (either may be left out), within the
 * token's bound range when it has one (the query narrows it, never widens it), within the video's
 * `duration`. Null when neither the query nor the token names a range: the whole video. A bad
 * value, `start ≥ end`, or a bound past the duration (or outside the token's range) →
 * `400 invalid_query`.
 */
export function requestedSpan(
  query: { start?: string[] | undefined; end?: string[] | undefined },
  bound: TokenClaims,
  duration: number,
): Span | null {
  const start = seconds(query.start, "start");
  const end = seconds(query.end, "end");
  const bounded = tokenSpan(bound, duration);
  if (start === undefined && end === undefined && bounded === null) return null;
  const { start: floor, end: ceiling } = bounded ?? { start: 0, end: duration };
  const span = { start: start ?? floor, end: end ?? ceiling };
  if (span.start < floor || span.end > ceiling) {
    throw badRange(`the range must lie within ${floor}–${ceiling} seconds`);
  }
  if (!(span.start < span.end)) throw badRange("start must be before end");
  return span;
}

/** The indexes of the segments that cover `span`: from `first` to `last`, both included. */
export function coveringSegments(plan: Plan, span: Span | null): { first: number; last: number } {
  const count = segmentCount(plan);
  if (span === null) return { first: 0, last: count - 1 };
  const startOf = (index: number) => frameTime(plan, segmentFrames(plan, index).first);
  let first = 0;
  while (first + 1 < count && startOf(first + 1) <= span.start) first += 1;
  let last = first;
  while (last + 1 < count && startOf(last + 1) < span.end) last += 1;
  return { first, last };
}

/** The query a clip's playlists carry to their variants, so each lists only the covering segments. */
export function spanQuery(span: Span | null): string {
  return span === null ? "" : `?start=${span.start}&end=${span.end}`;
}
