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

function isJsonMediaType(type: string): boolean {
  return type === "application/json" || (type.startsWith("application/") && type.endsWith("+json"));
}

/**
 * Requires a JSON body: a JSON Content-Type and parseable JSON, else 400 invalid_body. The parsed
 * text is left in Hono's body cache, where the route's schema validator reads it.
 */
export const jsonBody = documented(
  createMiddleware<AppEnv>(async (c, next) => {
    if (!isJsonMediaType(mediaType(c.req.header("content-type")))) {
      throw new ApiError("invalid_body", { message: "Content-Type must be application/json." });
    }
    const bytes = await readLimited(c.req.raw, MAX_JSON_BYTES);
    let text: string;
    try {
      text = new TextDecoder("utf-8", { fatal: true, ignoreBOM: false }).decode(bytes);
      JSON.parse(text);
    } catch {
      throw new ApiError("invalid_body", { message: "The body is not valid JSON." });
    }
    // Hono caches body promises under these keys, though its type names the resolved values.
    (c.req.bodyCache as { text?: Promise<string> }).text = Promise.resolve(text);
    await next();
  }),
  () => ["invalid_body", "payload_too_large"],
);
