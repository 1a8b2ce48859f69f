import type { Context } from "hono";
import { createMiddleware } from "hono/factory";
import type { AppEnv } from "./context";
import { ApiError } from "./errors";
import { documented } from "./route";

/** JSON bodies are small; anything larger is refused before it is read whole. */
export const MAX_JSON_BYTES = 64 * 1024;

/** The media type of a Content-Type header, lower case, without parameters. */
export function mediaType(contentType: string | null | undefined): string {
  return (contentType ?? "").split(";")[0]?.trim().toLowerCase() ?? "";
}

/**
 * Reads a request body, refusing it with 413 as soon as the declared length or the streamed bytes
 * pass `maxBytes`. Never holds more than `maxBytes` (plus one chunk) in memory.
 */
export async function readLimited(request: Request, maxBytes: number): Promise<Uint8Array> {
  const declared = request.headers.get("content-length");
  if (declared !== null && Number(declared) > maxBytes) throw new ApiError("payload_too_large");
  if (!request.body) return new Uint8Array(0);
  if (declared !== null && /^\d+$/.test(declared)) {
    // HTTP framing ends the body at its declared length, so it is read in one call rather than
    // chunk by chunk: 5 MiB arrive in 12–15 ms instead of 31–33 (wrangler dev). The check below
    // only matters for a request built in-process with a wrong header.
    const bytes = new Uint8Array(await request.arrayBuffer());
    if (bytes.byteLength > maxBytes) throw new ApiError("payload_too_large");
    return bytes;
  }
  const chunks: Uint8Array[] = [];
  let total = 0;
  const reader = request.body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > maxBytes) {
      await reader.cancel();
      throw new ApiError("payload_too_large");
    }
    chunks.push(value);
  }
  if (chunks.length === 1 && chunks[0]) return chunks[0];
  const body = new Uint8Array(total);
  let offset = 0;
  for (const chunk of chunks) {
    body.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return body;
}

/** What a route takes as its body: which media types, and how many bytes at most. */
export type BodyKind = { accepts: (mediaType: string) => boolean; maxBytes: number };

/**
 * The request's body, at most `kind.maxBytes` (else 413): the read `receiveBody` started, or one
 * started now.
 */
export async function bodyBytes<E extends AppEnv>(c: Context<E>, kind: BodyKind): Promise<Uint8Array> {
  const received = c.get("receivedBody");
  if (!received) return readLimited(c.req.raw, kind.maxBytes);
  // Read earlier, perhaps under a larger limit (the Idempotency-Key hashes any POST's body).
  const bytes = await received;
  if (bytes.byteLength > kind.maxBytes) throw new ApiError("payload_too_large");
  return bytes;
}

/**
 * Starts reading the body of an authenticated request without waiting for it, so that the bytes
 * arrive while the middleware after this one (the rate limiter) makes its round trip, instead of
 * after it. Put it after authentication, so a stranger never makes the service buffer a body;
 * only a body of a type the route takes is read. A read that fails (413) fails where the route
 * uses the body, after the checks that come first (docs/api-rules.md#the-order-of-checks); when one
 * of those answers, the bytes are dropped unread.
 */
export function receiveBody(kind: BodyKind) {
  return createMiddleware<AppEnv>(async (c, next) => {
    if (kind.accepts(mediaType(c.req.header("content-type")))) {
      const reading = readLimited(c.req.raw, kind.maxBytes);
      reading.catch(() => {});
      c.set("receivedBody", reading);
    }
    await next();
  });
}

/**
 * Only the media type decides (docs/api-rules.md#json-bodies): `application/json`, whatever
 * parameters follow, even malformed ones (`application/json;`, `application/json ; charset=utf-8`).
 * Anything else, `+json` suffixes included, is not a JSON body here.
 */
function isJsonMediaType(type: string): boolean {
  return type === "application/json";
}

export const JSON_BODY: BodyKind = { accepts: isJsonMediaType, maxBytes: MAX_JSON_BYTES };

/** `receiveBody` for a JSON body: put it before the rate limiter of a route that takes one. */
export const receiveJson = receiveBody(JSON_BODY);

/**
 * The JSON body of the request as text: a JSON Content-Type, at most `maxBytes`, well-formed UTF-8
 * and parseable JSON, else 400 invalid_body (413 past the limit).
 */
export async function readJsonText<E extends AppEnv>(c: Context<E>, kind: BodyKind = JSON_BODY): Promise<string> {
  if (!kind.accepts(mediaType(c.req.header("content-type")))) {
    throw new ApiError("invalid_body", { message: "Content-Type must be application/json." });
  }
  const bytes = await bodyBytes(c, kind);
  try {
    const text = new TextDecoder("utf-8", { fatal: true, ignoreBOM: false }).decode(bytes);
    JSON.parse(text);
    return text;
  } catch {
    throw new ApiError("invalid_body", { message: "The body is not valid JSON." });
  }
}

/**
 * Requires a JSON body (`readJsonText`). The request the route's schema validator then reads is the
 * same request with the text read here as its body and `application/json` as its Content-Type:
 * the validators of the OpenAPI layer hold the header to a narrower pattern than the API's rule
 * (docs/api-rules.md#json-bodies: they refuse `application/json;`), and must see the body this
 * middleware already read.
 */
export function jsonBodyOf(kind: BodyKind, options: { optional?: boolean } = {}) {
  return documented(
    createMiddleware<AppEnv>(async (c, next) => {
      // An optional body left out entirely (no Content-Type, nothing sent) reads as `{}`.
      const empty = c.req.raw.body === null || c.req.header("content-length") === "0";
      const absent = options.optional && !c.req.header("content-type") && empty;
      const text = absent ? "{}" : await readJsonText(c, kind);
      const headers = new Headers(c.req.raw.headers);
      headers.set("content-type", "application/json");
      headers.delete("content-length");
      c.req.raw = new Request(c.req.raw.url, { method: c.req.raw.method, headers, body: text });
      await next();
    }),
    () => ["invalid_body", "payload_too_large"],
  );
}

export const jsonBody = jsonBodyOf(JSON_BODY);

/** `jsonBody` for a route whose body may be left out: an empty request is `{}`. */
export const optionalJsonBody = jsonBodyOf(JSON_BODY, { optional: true });
