import { videoReader, videoWriter } from "../auth/guards";
import { jsonBody } from "../http/body";
import { found } from "../http/found";
import { publicOrigin } from "../http/public-url";
import { route } from "../http/route";
import { createRouter } from "../http/router";
import { jsonRequest, jsonResponse } from "../http/schemas";
import { idempotent } from "../idempotency/middleware";
import { createVideoWithUpload } from "../videos/create";
import type { VideoRow } from "../videos/model";
import { present } from "../videos/present";
import { ProjectQuerySchema } from "../videos/schemas";
import { findTusUpload, insertTusUploadStatement, type TusUploadRow } from "./queries";
import {
  DirectUploadCreateSchema,
  DirectUploadSchema,
  UploadParamsSchema,
  UploadProgressSchema,
  type UploadStatus,
} from "./schemas";
import { uploadObject } from "./tus/objects";
import { MAX_UPLOAD_BYTES } from "./tus/protocol";
import { creationUrl, uploadToken } from "./tus/url";

const TUS_DESCRIPTION =
  "The answer's `url` is a tus 1.0.0 creation endpoint (extensions `creation`, `termination`, " +
  "`expiration`) that any tus client may use without an API key until `expiresAt`, from a page on " +
  "`corsOrigin`: `POST` it with `Upload-Length` to create the upload (one per URL), then `PATCH` the " +
  "`Location` with `Content-Type: application/offset+octet-stream` and `Upload-Offset`, at most 64 MiB " +
  "a request; `HEAD` tells where to resume; `DELETE` ends it and deletes the video. Answers on the URL " +
  "are plain tus statuses (412, 409, 415, 413, 404), not JSON. When the last byte arrives the video is " +
  "`uploaded`.";

const create = route(
  {
    method: "post",
    path: "/v1/uploads",
    operationId: "createDirectUpload",
    tags: ["Uploads"],
    summary: "Create a video and a one-video tus upload URL for a browser or an app",
    description: TUS_DESCRIPTION,
    middleware: [videoWriter, idempotent, jsonBody] as const,
    request: { query: ProjectQuerySchema, body: jsonRequest(DirectUploadCreateSchema) },
    responses: { 201: jsonResponse(DirectUploadSchema, "The upload URL and its video") },
  },
  ["invalid_body"],
);

const read = route(
  {
    method: "get",
    path: "/v1/uploads/{id}",
    operationId: "getDirectUpload",
    tags: ["Uploads"],
    summary: "A direct upload's progress",
    middleware: [videoReader] as const,
    request: { params: UploadParamsSchema, query: ProjectQuerySchema },
    responses: { 200: jsonResponse(UploadProgressSchema, "Its progress") },
  },
  ["upload_not_found"],
);

const DEFAULT_EXPIRES_IN = 3600;

/** The tus upload's row of a new video (its id is the video's upload id). */
function tusUploadRow(video: VideoRow, tus: { corsOrigin: string; maxSizeBytes: number }): TusUploadRow {
  return {
    id: video.upload_id as string,
    project_id: video.project_id,
    livemode: video.livemode,
    video_id: video.id,
    cors_origin: tus.corsOrigin,
    max_size_bytes: tus.maxSizeBytes,
    expires_at: video.upload_expires_at as string,
    created_at: video.created_at,
  };
}

export const directUploadRoutes = createRouter()
  .openapi(create, async (c) => {
    const body = c.req.valid("json");
    const now = Date.now();
    const expiresAt = now + (body.expiresIn ?? DEFAULT_EXPIRES_IN) * 1000;
    const { tenant } = c.var;
    const tus = { corsOrigin: body.corsOrigin ?? "*", maxSizeBytes: body.maxSizeBytes ?? MAX_UPLOAD_BYTES };
    const video = await createVideoWithUpload(
      c.env.MEDIA,
      c.var.db,
      tenant,
      { title: body.video?.title ?? null, visibility: body.video?.visibility ?? "public", expiresAt, tus: true },
      now,
      (row) => [insertTusUploadStatement(c.var.db, tusUploadRow(row, tus))],
    );
    const upload = tusUploadRow(video, tus);
    const uploadId = upload.id;
    const url = creationUrl(publicOrigin(c), await uploadToken(c.var.config.uploadUrlSecret.current, uploadId));
    // Recorded first: an object that failed to start is found by the clean-up through the video.
    await uploadObject(c.env.TUS_UPLOADS, uploadId).init({
      uploadId,
      videoId: video.id,
      projectId: tenant.projectId,
      sourceKey: video.source_key,
      r2UploadId: video.upload_r2_id as string,
      corsOrigin: upload.cors_origin,
      maxSizeBytes: upload.max_size_bytes,
      expiresAt,
      url,
    });
    return c.json(
      {
        id: uploadId,
        livemode: upload.livemode === 1,
        url,
        expiresAt: upload.expires_at,
        video: present(c, video, now),
      },
      201,
    );
  })
  .openapi(read, async (c) => {
    const row = await found("upload_not_found", c.req.valid("param").id, (id) =>
      findTusUpload(c.var.db, c.var.tenant, id),
    );
    const progress = await uploadObject(c.env.TUS_UPLOADS, row.id).progress();
    const now = Date.now();
    const status: UploadStatus = row.video_deleted
      ? "cancelled"
      : row.video_uploaded || progress?.phase === "completed"
        ? "completed"
        : now >= Date.parse(row.expires_at) || progress?.phase === "ended"
          ? "expired"
          : progress?.started
            ? "uploading"
            : "waiting";
    return c.json(
      {
        id: row.id,
        livemode: row.livemode === 1,
        url: creationUrl(publicOrigin(c), await uploadToken(c.var.config.uploadUrlSecret.current, row.id)),
        expiresAt: row.expires_at,
        videoId: row.video_id,
        status,
        offset: progress?.offset ?? 0,
        length: progress?.length ?? null,
      },
      200,
    );
  });
