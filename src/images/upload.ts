import type { Context } from "hono";
import { type BodyKind, bodyBytes, mediaType } from "../http/body";
import type { AppEnv } from "../http/context";
import { ApiError } from "../http/errors";
import { type ImageInfo, type ImageType, inspectImage } from "./inspect";
import { stripMetadata } from "./strip";

export type ImageUpload = ImageInfo & { bytes: Uint8Array };

/** A raw image body: which image types a route takes, and how many bytes at most. */
export type ImageBody = BodyKind & { types: readonly ImageType[] };

/** The one of `types` a media type names, if any. */
function imageTypeOf(types: readonly ImageType[], type: string): ImageType | undefined {
  return types.find((allowed) => allowed === type);
}

export function imageBody(types: readonly ImageType[], maxBytes: number): ImageBody {
  return { types, maxBytes, accepts: (type) => imageTypeOf(types, type) !== undefined };
}

/**
 * Reads a raw image body, in the contract's order: a Content-Type outside `types` (parameters
 * ignored) → 415, unread; more than `maxBytes`, declared or streamed → 413, without reading past
 * the limit; bytes that are not a well-formed image of the declared type, or none → 400
 * invalid_image. What is kept is the image less its metadata (`stripMetadata`): a creator's GPS
 * position is never stored, let alone served.
 */
export async function readImageUpload<E extends AppEnv>(c: Context<E>, body: ImageBody): Promise<ImageUpload> {
  const type = imageTypeOf(body.types, mediaType(c.req.header("content-type")));
  if (!type) {
    throw new ApiError("unsupported_media_type", { message: `Content-Type must be one of ${body.types.join(", ")}.` });
  }
  const bytes = await bodyBytes(c, body);
  if (bytes.byteLength === 0) throw new ApiError("invalid_image", { message: "The body is empty." });
  const inspection = inspectImage(bytes, type);
  if (!inspection.ok) {
    throw new ApiError("invalid_image", { details: [{ path: "body", message: inspection.problem }] });
  }
  return { ...inspection.image, bytes: stripMetadata(bytes, type) };
}

export const EXTENSIONS: Record<ImageType, string> = { "image/jpeg": "jpg", "image/png": "png", "image/webp": "webp" };
