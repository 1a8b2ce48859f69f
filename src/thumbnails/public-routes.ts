import { z } from "@hono/zod-openapi";
import { serveR2Object } from "../http/bytes";
import { ConditionalHeaders } from "../http/conditional";
import { ApiError } from "../http/errors";
import { route } from "../http/route";
import { createRouter } from "../http/router";
import { binaryResponse, headerRefs } from "../http/schemas";
import { legacyThumbnailKey, thumbnailKeyForFile } from "../lib/storage-keys";
import { parseUlid } from "../lib/ulid";
import { THUMBNAIL_PATH } from "../videos/urls";
import { thumbnailVisibility } from "./queries";

/** A thumbnail is answered whole, as its OpenAPI document says (no ranges). */
const WHOLE = { ranges: false } as const;
const FILE_NAME = /^[0-9A-Za-z]{1,40}\.(jpg|png|webp)$/;

/**
 * Serves thumbnails straight from R2: the stored bytes with their Content-Type, an ETag and
 * Last-Modified, conditional requests answered as RFC 9110 says (304, 412; a malformed conditional
 * header is ignored), and a long immutable cache lifetime. Beside the R2 read (so it adds no wait
 * of its own), one D1 read of the video's row says whether the URL may be served at all: a
 * deleted video's (or deleted project's) URLs answer 404 and a private video's 403
 * playback_token_required, at once, whatever R2 still holds (its objects go a moment later, in
 * the deletions queue's consumer). That read goes to the D1 primary, not the nearest replica: a
 * replica may lag behind the DELETE or PATCH that just answered, and "at once"
 * (docs/images.md) must hold wherever the URL is asked for. Public thumbnails are read rarely at the origin
 * (their long cache lifetime lets a CDN keep them), so the hot path pays little for it. Error
 * answers carry `Cache-Control: no-store`, so no cache keeps a 403 once the video is public again.
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
      "Served with a long immutable cache lifetime: a replaced thumbnail gets a new URL, and the old one answers 404. " +
      "A deleted video's URLs answer 404 at once; a private video's answer `403 playback_token_required` (its " +
      "playback token's `thumbnail` URL serves the image instead).",
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
  ["not_found", "playback_token_required", "precondition_failed"],
);

const router = createRouter();
router.use(`${THUMBNAIL_PATH}/*`, async (c, next) => {
  await next();
  if (c.res.status >= 400) c.res.headers.set("Cache-Control", "no-store");
});

export const publicThumbnails = router.openapi(getThumbnail, async (c) => {
  const params = c.req.valid("param");
  const file = params.file;
  const projectId = parseUlid(params.projectId);
  const videoId = parseUlid(params.videoId);
  if (!projectId || !videoId || !FILE_NAME.test(file)) throw new ApiError("not_found");
  // The object with its body in one R2 round trip, beside the D1 read; an answer that may not be
  // sent drops the body unread.
  const request = c.req.raw;
  const [visibility, current] = await Promise.allSettled([
    thumbnailVisibility(c.env.DB.withSession("first-primary"), projectId, videoId),
    serveR2Object(c.env.MEDIA, thumbnailKeyForFile(projectId, videoId, file), request, WHOLE),
  ]);
  if (visibility.status === "rejected" || visibility.value === null || visibility.value === "private") {
    if (current.status === "fulfilled") await current.value.body?.cancel();
    if (visibility.status === "rejected") throw visibility.reason;
    throw new ApiError(visibility.value === null ? "not_found" : "playback_token_required");
  }
  if (current.status === "fulfilled") return current.value;
  // A thumbnail written before objects moved under their video's prefix is still served.
  if (!(current.reason instanceof ApiError && current.reason.code === "not_found")) throw current.reason;
  return serveR2Object(c.env.MEDIA, legacyThumbnailKey(projectId, videoId, file), request, WHOLE);
});
