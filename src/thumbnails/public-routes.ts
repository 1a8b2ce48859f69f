import { Hono } from "hono";
import { httpDate, preconditionStatus } from "../http/conditional";
import type { AppEnv } from "../http/context";
import { ApiError } from "../http/errors";
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
export const publicThumbnails = new Hono<AppEnv>().get(`${THUMBNAIL_PATH}/:projectId/:videoId/:file`, async (c) => {
  const { file } = c.req.param();
  const projectId = parseUlid(c.req.param("projectId"));
  const videoId = parseUlid(c.req.param("videoId"));
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
