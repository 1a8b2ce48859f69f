import { type TargetRules, targetProblem } from "../lib/safe-targets";

/**
 * Asking the origin for the file (contract §19): redirects followed by hand, each checked as the
 * URL was; a resumed fetch asks for the rest by `Range`, under `If-Range`. What an answer means is
 * decided by `judgeAnswer`, apart from the fetching.
 */

/** What a run asks for: the file from `start` (0: all of it), the first answer's validator when resuming. */
export type Ask = { start: number; validator: string | null };

/** An answer as the run uses it. */
export type Opened =
  /** The body, from `start` (0 when the origin sent the whole file), with the file's total size if told. */
  | { kind: "body"; body: ReadableStream<Uint8Array>; start: number; total: number | null; validator: string | null }
  /** Every byte is stored already (the origin answered 416 for the bytes after the last one). */
  | { kind: "whole" }
  /** The import cannot succeed: why, in words. */
  | { kind: "failed"; reason: string }
  /** It may succeed later (a network error): why. */
  | { kind: "transient"; reason: string };

const REDIRECTS = new Set([301, 302, 303, 307, 308]);

/** The validator `If-Range` may carry: a strong ETag, else Last-Modified; null when neither. */
export function validatorOf(headers: Headers): string | null {
  const etag = headers.get("etag");
  if (etag && !etag.startsWith("W/")) return etag;
  return headers.get("last-modified");
}

/** `Content-Range`: `bytes <first>-<last>/<total>` (206), or `bytes *\/<total>` (416). */
function contentRange(header: string | null): { first: number | null; total: number | null } | null {
  const match = header ? /^bytes (?:(\d+)-\d+|\*)\/(\d+|\*)$/.exec(header.trim()) : null;
  if (!match) return null;
  return {
    first: match[1] === undefined ? null : Number(match[1]),
    total: match[2] === "*" || match[2] === undefined ? null : Number(match[2]),
  };
}

function lengthOf(headers: Headers): number | null {
  const text = headers.get("content-length");
  return text !== null && /^\d+$/.test(text) ? Number(text) : null;
}

/** What a final (not redirecting) answer to `ask` means. The caller still owns the body. */
export function judgeAnswer(response: Response, ask: Ask, maxBytes: number): Exclude<Opened, { kind: "transient" }> {
  const { status } = response;
  if (status === 416 && ask.start > 0) {
    const range = contentRange(response.headers.get("content-range"));
    if (range?.total === ask.start) return { kind: "whole" };
  }
  if (status < 200 || status > 299) {
    const words = response.statusText ? ` ${response.statusText}` : "";
    return { kind: "failed", reason: `the origin answered ${status}${words}` };
  }
  if (!response.body) return { kind: "failed", reason: "the origin answered without a body" };
  let start = 0;
  let total = lengthOf(response.headers);
  if (status === 206) {
    const range = contentRange(response.headers.get("content-range"));
    if (ask.start === 0 || range?.first !== ask.start) {
      return { kind: "failed", reason: "the origin answered a range other than the one asked for" };
    }
    start = ask.start;
    total = range.total;
  }
  if (total !== null && total > maxBytes) return { kind: "failed", reason: tooLarge(maxBytes) };
  if (total === 0) return { kind: "failed", reason: "the file is empty" };
  return { kind: "body", body: response.body, start, total, validator: validatorOf(response.headers) };
}

export function tooLarge(maxBytes: number): string {
  return `the file is too large: more than ${maxBytes.toLocaleString("en-US")} bytes`;
}

export type OriginDeps = {
  fetch: typeof fetch;
  rules: TargetRules;
  maxRedirects: number;
  stallMs: number;
  maxBytes: number;
};

/**
 * Asks `url` for the file, following at most `maxRedirects` redirects, each target checked by the
 * safe-target rules. No answer within `stallMs` fails it ("nothing received"); a thrown network
 * error is transient.
 */
export async function openSource(deps: OriginDeps, url: string, ask: Ask): Promise<Opened> {
  let target = url;
  for (let hop = 0; ; hop++) {
    const problem = targetProblem(target, deps.rules);
    if (problem) return { kind: "failed", reason: `${hop === 0 ? "the URL" : "a redirect"} ${problem}: ${target}` };
    const headers = new Headers();
    if (ask.start > 0) {
      headers.set("range", `bytes=${ask.start}-`);
      if (ask.validator) headers.set("if-range", ask.validator);
    }
    const response = await askOnce(deps, target, headers);
    if ("kind" in response) return response;
    const location = response.headers.get("location");
    if (!REDIRECTS.has(response.status) || location === null) return judgeAnswer(response, ask, deps.maxBytes);
    await response.body?.cancel();
    if (hop >= deps.maxRedirects) return { kind: "failed", reason: `more than ${deps.maxRedirects} redirects` };
    try {
      target = new URL(location, target).toString();
    } catch {
      return { kind: "failed", reason: `a redirect to an invalid URL: ${location}` };
    }
  }
}

/** One request, its headers awaited at most `stallMs`. */
async function askOnce(deps: OriginDeps, url: string, headers: Headers): Promise<Response | Opened> {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), deps.stallMs);
  try {
    return await deps.fetch(url, { headers, redirect: "manual", signal: controller.signal });
  } catch (error) {
    if (controller.signal.aborted) return { kind: "failed", reason: nothingFor(deps.stallMs) };
    return {
      kind: "transient",
      reason: `the connection failed: ${error instanceof Error ? error.message : String(error)}`,
    };
  } finally {
    clearTimeout(timer);
  }
}

export function nothingFor(stallMs: number): string {
  return `nothing received for ${stallMs / 1000} s`;
}
