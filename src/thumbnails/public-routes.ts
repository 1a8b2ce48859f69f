import { z } from "@hono/zod-openapi";
import { ConditionalHeaders, httpDate, notModified } from "../http/conditional";
import { ApiError } from "../http/errors";
import { route } from "../http/route";
import { createRouter } from "../http/router";
import { binaryResponse, headerRefs } from "../http/schemas";
import { legacyThumbnailKey, thumbnailKeyForFile } from "../lib/storage-keys";
import { parseUlid } from "../lib/ulid";
import { isLiveProject } from "../projects/queries";
import { THUMBNAIL_PATH } from "./urls";

const FILE_NAME = /^[0-9A-Za-z]{1,40}\.(jpg|png|webp)$/;

/**
 * Serves thumbnails to anyone, straight from R2: the stored bytes with their Content-Type, an ETag
 * and Last-Modified, conditional requests answered as RFC 9110 says (304, 412; a malformed
 * conditional header is ignored), and a long immutable cache lifetime. A URL whose object is gone
 * (replaced, removed, or its video deleted) answers 404, and so does every URL of a deleted
 * project at once, while the purge has not yet reached its objects: the project is looked up in D1
 * beside the R2 read, so the check adds no wait of its own.
 */
const getThumbnail = route(
  {
    method: "get",
    path: `${THUMBNAIL_PATH}/{projectId}/{videoId}/{file}`,
    operationId: "getThumbnail",
    tags: ["Thumbnails"],
    summary: "A thumbnail image: a video's public thumbnailUrl",
    description:
      "Public, for anyone holding the URL (a video's `thumbnail.url`, or `thumbnailUrl` from a custom upload). " +
      "Served with a long immutable cache lifetime: a replaced thumbnail gets a new URL, and the old one answers 404.",
    request: {
      params: z.object({
        projectId: z.string().openapi({ description: "The project's ULID", example: "01JD5Q3V7Y8N2M4K6P9R0S1T2V" }),
        videoId: z.string().openapi({ description: "The video's ULID", example: "01JD5Q3V7Y8N2M4K6P9R0S1T2V" }),
        file: z.string().openapi({ pattern: FILE_NAME.source, example: "01JD5Q3V7Y8N2M4K6P9R0S1T2W.jpg" }),
      }),
      headers: ConditionalHeaders,
    },
    responses: {
      200: {
        ...binaryResponse(["image/jpeg", "image/png", "image/webp"], "The image, without metadata"),
        headers: headerRefs(["ETag", "Last-Modified", "Cache-Control"]),
      },
      304: {
        description: "Not modified: the copy If-None-Match (or If-Modified-Since) names is current",
        headers: headerRefs(["ETag", "Last-Modified", "Cache-Control"]),
      },
    },
  },
  ["not_found", "precondition_failed"],
);

export const publicThumbnails = createRouter().openapi(getThumbnail, async (c) => {
  const params = c.req.valid("param");
  const file = params.file;
  const projectId = parseUlid(params.projectId);
  const videoId = parseUlid(params.videoId);
  if (!projectId || !videoId || !FILE_NAME.test(file)) throw new ApiError("not_found");
  // The object with its body in one R2 round trip; a conditional answer drops the body unread.
  const [live, current] = await Promise.all([
    isLiveProject(c.var.db, projectId),
    c.env.MEDIA.get(thumbnailKeyForFile(projectId, videoId, file)),
  ]);
  // A thumbnail written before objects moved under their video's prefix is still served.
  const object = current ?? (live ? await c.env.MEDIA.get(legacyThumbnailKey(projectId, videoId, file)) : null);
  if (!live) {
    await object?.body.cancel();
    throw new ApiError("not_found");
  }
  if (!object) throw new ApiError("not_found");
  const headers = new Headers();
  object.writeHttpMetadata(headers);
  headers.set("ETag", object.httpEtag);
  headers.set("Last-Modified", httpDate(object.uploaded));
  const conditional = await notModified(c.req.raw.headers, object, headers);
  if (conditional) return conditional;
  headers.set("Content-Length", String(object.size));
  return new Response(object.body, { headers });
});
