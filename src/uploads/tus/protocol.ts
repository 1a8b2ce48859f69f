/**
 * tus 1.0.0 as this service speaks it (docs/api-guide.md#direct-uploads-from-a-browser-tus): the
 * headers, the limits, and the answers' shape. Pure: the Durable Object (`object.ts`) and the
 * Worker's entry (`routes.ts`) both build their answers here, so every answer carries the same
 * headers.
 */

export const TUS_VERSION = "1.0.0";
export const TUS_EXTENSIONS = "creation,termination,expiration";
export const OFFSET_CONTENT_TYPE = "application/offset+octet-stream";

/**
 * The largest PATCH body (docs/api-guide.md#direct-uploads-from-a-browser-tus); Cloudflare's own
 * request limit is 100 MB and up.
 */
export const MAX_PATCH_BYTES = 64 * 1024 * 1024;

/** The default and largest `maxSizeBytes` of an upload URL. */
export const MAX_UPLOAD_BYTES = 50 * 1024 ** 3;

/** R2's cap on the parts of one multipart upload. */
export const MAX_PARTS = 10_000;
/**
 * The part size the upload's object cuts the stream into: 8 MiB (R2 wants at least 5 MiB for every
 * part but the last), or more when the upload would otherwise need more than 10,000 parts.
 */
export const BASE_PART_BYTES = 8 * 1024 * 1024;

export function partSizeFor(length: number): number {
  return Math.max(BASE_PART_BYTES, Math.ceil(length / MAX_PARTS));
}

/** The request headers a browser's preflight must be allowed to send (tus-js-client's among them). */
const ALLOWED_HEADERS = [
  "Tus-Resumable",
  "Upload-Length",
  "Upload-Offset",
  "Upload-Metadata",
  "Upload-Defer-Length",
  "Upload-Concat",
  "Content-Type",
  "X-HTTP-Method-Override",
  "X-Requested-With",
].join(", ");

/** The answer headers a browser page may read. */
const EXPOSED_HEADERS = [
  "Location",
  "Upload-Offset",
  "Upload-Length",
  "Upload-Expires",
  "Tus-Resumable",
  "Tus-Version",
  "Tus-Extension",
  "Tus-Max-Size",
  "x-request-id",
].join(", ");

/** Methods on the creation URL and on the upload it creates. */
export const URL_METHODS = "POST, OPTIONS";
export const UPLOAD_METHODS = "HEAD, PATCH, DELETE, OPTIONS";

/**
 * Headers every answer on an upload URL carries: `Tus-Resumable`, no caching, and CORS for the
 * URL's origin (`*` when the URL is unknown: there is no origin to name, and nothing to protect).
 */
export function tusHeaders(corsOrigin: string): Headers {
  const headers = new Headers({
    "Tus-Resumable": TUS_VERSION,
    "Cache-Control": "no-store",
    "Access-Control-Allow-Origin": corsOrigin,
    "Access-Control-Expose-Headers": EXPOSED_HEADERS,
  });
  if (corsOrigin !== "*") headers.set("Vary", "Origin");
  return headers;
}

/** A plain answer (tus answers carry no JSON error body) with the common headers and `extra`. */
export function tusAnswer(status: number, corsOrigin: string, extra: Record<string, string> = {}): Response {
  const headers = tusHeaders(corsOrigin);
  for (const [name, value] of Object.entries(extra)) headers.set(name, value);
  return new Response(null, { status, headers });
}

/** `OPTIONS`: what the server supports, and for a browser's preflight what it may send. */
export function optionsAnswer(corsOrigin: string, maxSizeBytes: number, methods: string): Response {
  return tusAnswer(204, corsOrigin, {
    "Tus-Version": TUS_VERSION,
    "Tus-Extension": TUS_EXTENSIONS,
    "Tus-Max-Size": String(maxSizeBytes),
    "Access-Control-Allow-Methods": methods,
    "Access-Control-Allow-Headers": ALLOWED_HEADERS,
    "Access-Control-Max-Age": "86400",
  });
}

/** The method a request means: tus lets clients that cannot send PATCH or DELETE tunnel them through POST. */
export function tusMethod(request: Request): string {
  const override = request.headers.get("x-http-method-override")?.trim().toUpperCase();
  return request.method === "POST" && override ? override : request.method;
}

/** Whether the request speaks tus 1.0.0 (required on every request but OPTIONS). */
export function speaksTus(request: Request): boolean {
  return request.headers.get("tus-resumable")?.trim() === TUS_VERSION;
}

/** A non-negative decimal header value (`Upload-Length`, `Upload-Offset`), else null. */
export function headerInt(request: Request, name: string): number | null {
  const value = request.headers.get(name)?.trim();
  if (value === undefined || !/^\d{1,16}$/.test(value)) return null;
  const number = Number(value);
  return Number.isSafeInteger(number) ? number : null;
}
