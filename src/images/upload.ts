import type { Context } from "hono";
import { type BodyKind, bodyBytes, mediaType } from "../http/body";
import type { AppEnv } from "../http/context";
import { ApiError } from "../http/errors";
import { pixelProblem } from "./decode";
import { type ImageInfo, type ImageType, inspectImage } from "./inspect";
import { stripMetadata } from "./strip";

export type ImageUpload = ImageInfo & { bytes: Uint8Array };

/**
 * What a route holds its images to, beyond a well-formed structure: `still`, one picture (no APNG,
 * no animated WebP); `maxDimension`, the largest width and height; `decodePixels`, pixel data that
 * decodes (`pixelProblem`).
 */
export type ImageRules = { still?: boolean; maxDimension?: number; decodePixels?: boolean };

/** A raw image body: which image types a route takes, how many bytes at most, and its rules. */
export type ImageBody = BodyKind & { types: readonly ImageType[]; rules: ImageRules };

/** The one of `types` a media type names, if any. */
function imageTypeOf(types: readonly ImageType[], type: string): ImageType | undefined {
  return types.find((allowed) => allowed === type);
}

export function imageBody(types: readonly ImageType[], maxBytes: number, rules: ImageRules = {}): ImageBody {
  return { types, maxBytes, rules, accepts: (type) => imageTypeOf(types, type) !== undefined };
}

/** Why the image breaks the route's rules, or null. */
async function ruleBroken(bytes: Uint8Array, image: ImageInfo, rules: ImageRules): Promise<string | null> {
  if (rules.still && image.animated) return "an animated image (one still picture is taken)";
  const max = rules.maxDimension;
  if (max !== undefined && (image.width > max || image.height > max)) {
    return `${image.width}×${image.height} is larger than ${max}×${max}`;
  }
  return rules.decodePixels ? await pixelProblem(bytes, image) : null;
}

/**
 * Reads a raw image body, in the order docs/images.md gives: a Content-Type outside `types`
 * (parameters ignored) → 415, unread; more than `maxBytes`, declared or streamed → 413, without
 * reading past the limit; bytes that are not a well-formed image of the declared type, or none, or
 * an image that breaks the route's rules (`ImageRules`) → 400 invalid_image. What is kept is the
 * image less its metadata (`stripMetadata`): a creator's GPS position is never stored, let alone
 * served.
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
  const broken = await ruleBroken(bytes, inspection.image, body.rules);
  if (broken) throw new ApiError("invalid_image", { details: [{ path: "body", message: broken }] });
  return { ...inspection.image, bytes: stripMetadata(bytes, type) };
}

export const EXTENSIONS: Record<ImageType, string> = { "image/jpeg": "jpg", "image/png": "png", "image/webp": "webp" };
