import { logError } from "../lib/log";
import { type TargetRules, targetProblem } from "../lib/safe-targets";
import type { Timer } from "../lib/time";
import type { Pace } from "./pace";
import { behindReason, clip, originAnswered, tooLarge, URL_CHARS } from "./words";

/**
 * Asking the origin for the file (docs/imports.md): redirects followed by hand, each checked as the
 * URL was; a resumed fetch asks for the rest by `Range`, under `If-Range`. What an answer means is
 * decided by `judgeAnswer`, apart from the fetching.
 */

/** What a run asks for: the file from `start` (0: all of it), the first answer's validator when resuming. */
export type Ask = { start: number; validator: string | null };

/** An answer as the run uses it. */
export type Opened =
  /**
   * The body, from `start` (0 when the origin sent the whole file), as the bytes it means (decoded
   * when the origin sent it with a `Content-Encoding`), with the file's total size if known.
   */
  | { kind: "body"; body: ReadableStream<Uint8Array>; start: number; total: number | null; validator: string | null }
  /** Every byte is stored already (the origin answered 416 for the bytes after the last one). */
  | { kind: "whole" }
  /** The import cannot succeed: why, in words. */
  | { kind: "failed"; reason: string }
  /** It may succeed later (a network error): why. */
  | { kind: "transient"; reason: string }
  /** The run was told to stop while it waited. */
  | { kind: "stopped" };

const REDIRECTS = new Set([301, 302, 303, 307, 308]);

/**
 * The content codings an answer may carry. The Workers runtime's fetch decodes gzip and br itself
 * (its body is the decoded bytes, its Content-Length still the encoded size), but hands deflate over
 * as sent, so that one is decoded here (docs/imports.md, "Compressed answers").
 */
const DECODED_BY_THE_RUNTIME = new Set(["gzip", "br"]);

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

/** The answer's content coding, lower case; null for none (or `identity`). */
function codingOf(headers: Headers): string | null {
  const coding = headers.get("content-encoding")?.trim().toLowerCase() ?? "";
  return coding === "" || coding === "identity" ? null : coding;
}

/** The body as the bytes it means; null for a coding this service cannot decode. */
function decodedBody(body: ReadableStream<Uint8Array>, coding: string | null): ReadableStream<Uint8Array> | null {
  if (coding === null || DECODED_BY_THE_RUNTIME.has(coding)) return body;
  if (coding === "deflate") return body.pipeThrough(new DecompressionStream("deflate"));
  return null;
}

/**
 * What a final (not redirecting) answer to `ask` means. The caller still owns the body. A 206 of a
 * body with a content coding is a range of the encoded bytes, which cannot follow the decoded ones
 * stored: `openSource` asks for the whole file instead.
 */
export function judgeAnswer(response: Response, ask: Ask, maxBytes: number): Exclude<Opened, { kind: "transient" }> {
  const { status } = response;
  if (status === 416 && ask.start > 0) {
    const range = contentRange(response.headers.get("content-range"));
    if (range?.total === ask.start) return { kind: "whole" };
  }
  if (status < 200 || status > 299) return { kind: "failed", reason: originAnswered(status, response.statusText) };
  if (!response.body) return { kind: "failed", reason: "the origin answered without a body" };
  const coding = codingOf(response.headers);
  const body = decodedBody(response.body, coding);
  if (!body) {
    return {
      kind: "failed",
      reason: `the origin sent the file encoded as ${clip(coding ?? "", 40)}, which this service cannot decode`,
    };
  }
  // An encoded answer's Content-Length counts the encoded bytes, not the file's.
  let total = coding === null ? lengthOf(response.headers) : null;
  let start = 0;
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
  return { kind: "body", body, start, total, validator: validatorOf(response.headers) };
}

export type OriginDeps = {
  fetch: typeof fetch;
  rules: TargetRules;
  maxRedirects: number;
  /** The origin's pace: its headers may take at most its window (nothing received for that long fails). */
  pace: Pace;
  maxBytes: number;
  timer: Timer;
  /** The run stops: the request in flight is aborted. */
  signal?: AbortSignal | undefined;
};

/**
 * Asks `url` for the file, following at most `maxRedirects` redirects, each target checked by the
 * safe-target rules. No answer within the pace's window fails it ("nothing received"); a thrown network
 * error is transient.
 */
export async function openSource(deps: OriginDeps, url: string, ask: Ask): Promise<Opened> {
  let target = url;
  let asked = ask;
  for (let hop = 0; ; hop++) {
    const problem = targetProblem(target, deps.rules);
    if (problem) {
      const what = hop === 0 ? "the URL" : "a redirect";
      return { kind: "failed", reason: `${what} ${problem}: ${clip(target, URL_CHARS)}` };
    }
    const response = await askOnce(deps, target, asked);
    if ("kind" in response) return response;
    const location = response.headers.get("location");
    if (!REDIRECTS.has(response.status) || location === null) {
      if (response.status === 206 && asked.start > 0 && codingOf(response.headers) !== null) {
        // The same URL again, for the whole file (a 206 is no redirect: the hop is not counted).
        await response.body?.cancel().catch(() => {});
        asked = { start: 0, validator: null };
        hop--;
        continue;
      }
      return judgeAnswer(response, asked, deps.maxBytes);
    }
    await response.body?.cancel().catch(() => {});
    if (hop >= deps.maxRedirects) return { kind: "failed", reason: `more than ${deps.maxRedirects} redirects` };
    try {
      target = new URL(location, target).toString();
    } catch {
      return { kind: "failed", reason: `a redirect to an invalid URL: ${clip(location, URL_CHARS)}` };
    }
  }
}

/**
 * One request, its headers awaited at most the pace's window. It asks for the file as it is stored
 * (`Accept-Encoding: identity`), which an origin that honours it sends resumable by Range.
 */
async function askOnce(deps: OriginDeps, url: string, ask: Ask): Promise<Response | Opened> {
  const headers = new Headers({ "accept-encoding": "identity" });
  if (ask.start > 0) {
    headers.set("range", `bytes=${ask.start}-`);
    if (ask.validator) headers.set("if-range", ask.validator);
  }
  const controller = new AbortController();
  let waited = false;
  const wait = deps.timer(deps.pace.windowMs);
  wait.fired.then(() => {
    waited = true;
    controller.abort();
  });
  const stop = () => controller.abort();
  deps.signal?.addEventListener("abort", stop, { once: true });
  try {
    if (deps.signal?.aborted) return { kind: "stopped" };
    return await deps.fetch(url, { headers, redirect: "manual", signal: controller.signal });
  } catch (error) {
    if (deps.signal?.aborted) return { kind: "stopped" };
    if (waited) return { kind: "failed", reason: behindReason("nothing", deps.pace) };
    // The runtime's own words for a failed connection are not this API's: they go to the logs.
    logError("import: the origin's connection failed", error);
    return { kind: "transient", reason: "the connection to the origin failed" };
  } finally {
    wait.cancel();
    deps.signal?.removeEventListener("abort", stop);
  }
}
