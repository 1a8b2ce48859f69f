import { z } from "@hono/zod-openapi";
import type { Context } from "hono";
import type { AppEnv } from "../http/context";
import { publicOrigin } from "../http/public-url";
import { route } from "../http/route";
import { createRouter } from "../http/router";
import { jsonResponse, UlidSchema } from "../http/schemas";
import { IMAGE_TYPES } from "../images/inspect";
import { EXTENSIONS, readImageUpload } from "../images/upload";
import { swapObject } from "../lib/swap-object";
import { ulid } from "../lib/ulid";
import { rateLimit } from "../rate-limit/middleware";
import type { VideoRow } from "../videos/model";
import { pathVideo } from "../videos/present";
import { swapCustomThumbnail } from "../videos/queries";
import { writeVideos } from "../videos/routes";
import { ProjectQuerySchema, VideoParamsSchema } from "../videos/schemas";
import { customThumbnailKey, thumbnailOf } from "./urls";

export const MAX_THUMBNAIL_BYTES = 5 * 1024 * 1024;
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
    tags: ["Thumbnails"],
    summary: "Set a custom thumbnail from raw JPEG, PNG or WebP bytes (at most 5 MiB)",
    middleware: [writeVideos, rateLimit("thumbnail")] as const,
    request: {
      params: VideoParamsSchema,
      query: ProjectQuerySchema,
      body: {
        content: Object.fromEntries(
          IMAGE_TYPES.map((type) => [type, { schema: z.string().openapi({ format: "binary" }) }]),
        ),
      },
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
    tags: ["Thumbnails"],
    summary: "Remove the custom thumbnail, restoring the automatic poster frame",
    middleware: [writeVideos] as const,
    request: { params: VideoParamsSchema, query: ProjectQuerySchema },
    responses: {
      200: jsonResponse(ThumbnailResultSchema, "The automatic poster frame URL"),
    },
  },
  ["video_not_found"],
);

/** Points the video at `next` (a stored object, or null), deleting the image it replaced. */
function switchThumbnail(c: Context<AppEnv>, videoId: string, next: string | null): Promise<VideoRow> {
  return swapObject(c.env.MEDIA, next, async () => {
    const before = await pathVideo(c, videoId);
    const result = await swapCustomThumbnail(
      c.var.db,
      c.var.projectId,
      before.id,
      before.custom_thumbnail_key,
      next,
      Date.now(),
    );
    return { replaced: before.custom_thumbnail_key, result };
  });
}

function result(c: Context<AppEnv>, row: VideoRow) {
  const thumbnail = thumbnailOf(publicOrigin(c), row);
  return c.json({ videoId: row.id, thumbnailUrl: thumbnail.url, source: thumbnail.source }, 200);
}

export const thumbnailRoutes = createRouter()
  .openapi(put, async (c) => {
    const image = await readImageUpload(c.req.raw, { types: IMAGE_TYPES, maxBytes: MAX_THUMBNAIL_BYTES });
    const video = await pathVideo(c, c.req.valid("param").id);
    const key = customThumbnailKey(video.project_id, video.id, `${ulid()}.${EXTENSIONS[image.type]}`);
    await c.env.MEDIA.put(key, image.bytes, {
      httpMetadata: { contentType: image.type, cacheControl: THUMBNAIL_CACHE_CONTROL },
    });
    try {
      return result(c, await switchThumbnail(c, video.id, key));
    } catch (error) {
      // The video does not point at it (gone, or the write failed): leave no orphan behind.
      await c.env.MEDIA.delete(key);
      throw error;
    }
  })
  .openapi(remove, async (c) => {
    const video = await pathVideo(c, c.req.valid("param").id);
    return result(c, video.custom_thumbnail_key ? await switchThumbnail(c, video.id, null) : video);
  });
