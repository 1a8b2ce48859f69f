import { Hono } from "hono";
import type { AppEnv } from "../http/context";
import { ApiError } from "../http/errors";
import { parseUlid } from "../lib/ulid";
import { THUMBNAIL_PATH } from "./urls";

const FILE_NAME = /^[0-9A-Za-z]{1,40}\.(jpg|png|webp)$/;

/**
 * Serves thumbnails to anyone, straight from R2: the exact bytes with their Content-Type, an
 * ETag (304 on If-None-Match) and a long immutable cache lifetime. A URL whose object is gone
 * (replaced, removed, or its video deleted) answers 404.
 */
export const publicThumbnails = new Hono<AppEnv>().get(`${THUMBNAIL_PATH}/:projectId/:videoId/:file`, async (c) => {
  const { projectId, videoId, file } = c.req.param();
  if (!parseUlid(projectId) || !parseUlid(videoId) || !FILE_NAME.test(file)) throw new ApiError("not_found");
  const object = await c.env.MEDIA.get(`thumbnails/${projectId.toUpperCase()}/${videoId.toUpperCase()}/${file}`, {
    onlyIf: c.req.raw.headers,
  });
  if (!object) throw new ApiError("not_found");
  const headers = new Headers();
  object.writeHttpMetadata(headers);
  headers.set("ETag", object.httpEtag);
  if (!("body" in object)) return new Response(null, { status: 304, headers });
  headers.set("Content-Length", String(object.size));
  return new Response(object.body, { headers });
});
