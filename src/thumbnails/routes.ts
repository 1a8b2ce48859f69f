import { z } from "@hono/zod-openapi";
import type { Context } from "hono";
import type { TenantEnv } from "../auth/context";
import { videoWriter } from "../auth/guards";
import { receiveBody } from "../http/body";
import { ApiError } from "../http/errors";
import { publicOrigin } from "../http/public-url";
import { route } from "../http/route";
import { createRouter } from "../http/router";
import { binaryBody, jsonResponse, UlidSchema } from "../http/schemas";
import { IMAGE_TYPES } from "../images/inspect";
import { EXTENSIONS, type ImageUpload, imageBody, readImageUpload } from "../images/upload";
import { replaceObject } from "../lib/replace-object";
import { customThumbnailKey } from "../lib/storage-keys";
import { parseUlid, ulid } from "../lib/ulid";
import { rateLimit } from "../rate-limit/middleware";
import type { VideoRow } from "../videos/model";
import { ProjectQuerySchema, VideoParamsSchema } from "../videos/schemas";
import { thumbnailOf } from "../videos/urls";
import { swapCustomThumbnail } from "./queries";

export const MAX_THUMBNAIL_BYTES = 5 * 1024 * 1024;
/** Its pixels decoded: a corrupt or truncated pixel stream is refused (docs/images.md). */
const THUMBNAIL_BODY = imageBody(IMAGE_TYPES, MAX_THUMBNAIL_BYTES, { decodePixels: true });
/** A year: every upload gets a new URL, so a URL's bytes never change. */
export const THUMBNAIL_CACHE_CONTROL = "public, max-age=31536000, immutable";

const ThumbnailResultSchema = z
  .object({
    videoId: UlidSchema,
    thumbnailUrl: z.string().openapi({ format: "uri" }),
    source: z.enum(["auto", "custom"]),
  })
  .openapi("ThumbnailResult");

const put = route(
  {
    method: "put",
    path: "/v1/videos/{id}/thumbnail",
    operationId: "setThumbnail",
    tags: ["Thumbnails"],
    summary: "Set a custom thumbnail from raw JPEG, PNG or WebP bytes (at most 5 MiB)",
    middleware: [videoWriter, receiveBody(THUMBNAIL_BODY), rateLimit("thumbnail")] as const,
    request: {
      params: VideoParamsSchema,
      query: ProjectQuerySchema,
      body: binaryBody(
        IMAGE_TYPES,
        "The image's bytes, at most 5 MiB (5,242,880 bytes); Content-Type must name the actual format",
      ),
    },
    responses: {
      200: jsonResponse(ThumbnailResultSchema, "The new public thumbnail URL"),
    },
  },
  ["unsupported_media_type", "payload_too_large", "invalid_image", "video_not_found"],
);

const remove = route(
  {
    method: "delete",
    path: "/v1/videos/{id}/thumbnail",
    operationId: "deleteThumbnail",
    tags: ["Thumbnails"],
    summary: "Remove the custom thumbnail, restoring the automatic poster frame",
    middleware: [videoWriter] as const,
    request: { params: VideoParamsSchema, query: ProjectQuerySchema },
    responses: {
      200: jsonResponse(ThumbnailResultSchema, "The automatic poster frame URL"),
    },
  },
  ["video_not_found"],
);

/** Points the video at a new custom image (or none), deleting the one it replaced. */
async function switchThumbnail<E extends TenantEnv>(
  c: Context<E>,
  rawId: string,
  image: ImageUpload | null,
): Promise<VideoRow> {
  const videoId = parseUlid(rawId);
  if (!videoId) throw new ApiError("video_not_found");
  const next = image && {
    key: customThumbnailKey(c.var.tenant.projectId, videoId, `${ulid()}.${EXTENSIONS[image.type]}`),
    bytes: image.bytes,
    httpMetadata: { contentType: image.type, cacheControl: THUMBNAIL_CACHE_CONTROL },
  };
  const row = await replaceObject(c.env.MEDIA, next, (key) =>
    swapCustomThumbnail(c.var.db, c.var.tenant, videoId, key, Date.now()),
  );
  if (!row) throw new ApiError("video_not_found");
  return row;
}

function result<E extends TenantEnv>(c: Context<E>, row: VideoRow) {
  const thumbnail = thumbnailOf(publicOrigin(c), row);
  return c.json({ videoId: row.id, thumbnailUrl: thumbnail.url, source: thumbnail.source }, 200);
}

export const thumbnailRoutes = createRouter()
  .openapi(put, async (c) => {
    const image = await readImageUpload(c, THUMBNAIL_BODY);
    return result(c, await switchThumbnail(c, c.req.valid("param").id, image));
  })
  .openapi(remove, async (c) => result(c, await switchThumbnail(c, c.req.valid("param").id, null)));
