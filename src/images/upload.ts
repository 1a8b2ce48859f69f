import { mediaType, readLimited } from "../http/body";
import { ApiError } from "../http/errors";
import { type ImageInfo, type ImageType, inspectImage } from "./inspect";

export type ImageUpload = ImageInfo & { bytes: Uint8Array };

/**
 * Reads a raw image body, in the contract's order: a Content-Type outside `types` (parameters
 * ignored) → 415; more than `maxBytes`, declared or streamed → 413, without reading past the
 * limit; bytes that are not a well-formed image of the declared type, or none → 400 invalid_image.
 */
export async function readImageUpload(
  request: Request,
  options: { types: readonly ImageType[]; maxBytes: number },
): Promise<ImageUpload> {
  const type = options.types.find((allowed) => allowed === mediaType(request.headers.get("content-type")));
  if (!type) {
    throw new ApiError("unsupported_media_type", {
      message: `Content-Type must be one of ${options.types.join(", ")}.`,
    });
  }
  const bytes = await readLimited(request, options.maxBytes);
  if (bytes.byteLength === 0) throw new ApiError("invalid_image", { message: "The body is empty." });
  const inspection = inspectImage(bytes, type);
  if (!inspection.ok) {
    throw new ApiError("invalid_image", { details: [{ path: "body", message: inspection.problem }] });
  }
  return { ...inspection.image, bytes };
}

export const EXTENSIONS: Record<ImageType, string> = { "image/jpeg": "jpg", "image/png": "png", "image/webp": "webp" };
