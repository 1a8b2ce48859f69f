import { Hono } from "hono";
import { httpDate, preconditionStatus } from "../http/conditional";
import type { AppEnv } from "../http/context";
import { ApiError } from "../http/errors";
import { parseUlid } from "../lib/ulid";
import { THUMBNAIL_PATH } from "./urls";

const FILE_NAME = /^[0-9A-Za-z]{1,40}\.(jpg|png|webp)$/;

/**
 * Serves thumbnails to anyone, straight from R2: the stored bytes with their Content-Type, an ETag
 * and Last-Modified, conditional requests answered as RFC 9110 says (304, 412; a malformed
 * conditional header is ignored), and a long immutable cache lifetime. A URL whose object is gone
 * (replaced, removed, or its video deleted) answers 404.
 */
export const publicThumbnails = new Hono<AppEnv>().get(`${THUMBNAIL_PATH}/:projectId/:videoId/:file`, async (c) => {
  const { projectId, videoId, file } = c.req.param();
  if (!parseUlid(projectId) || !parseUlid(videoId) || !FILE_NAME.test(file)) throw new ApiError("not_found");
  // One round trip: the object with its body; a conditional answer drops the body unread.
  const object = await c.env.MEDIA.get(`thumbnails/${projectId.toUpperCase()}/${videoId.toUpperCase()}/${file}`);
  if (!object) throw new ApiError("not_found");
  const headers = new Headers();
  object.writeHttpMetadata(headers);
  headers.set("ETag", object.httpEtag);
  headers.set("Last-Modified", httpDate(object.uploaded));
  const status = preconditionStatus(c.req.raw.headers, {
    etag: object.httpEtag,
    lastModified: object.uploaded.getTime(),
  });
  if (status !== 200) {
    await object.body.cancel();
    if (status === 412) throw new ApiError("precondition_failed");
    return new Response(null, { status, headers });
  }
  headers.set("Content-Length", String(object.size));
  return new Response(object.body, { headers });
});
