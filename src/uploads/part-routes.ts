import { z } from "@hono/zod-openapi";
import { videoWriter } from "../auth/guards";
import { JSON_BODY, jsonBodyOf } from "../http/body";
import { ApiError } from "../http/errors";
import { route } from "../http/route";
import { createRouter } from "../http/router";
import { binaryBody, decimalInt, jsonRequest, jsonResponse, pathId } from "../http/schemas";
import { idempotent } from "../idempotency/middleware";
import { completionInFlight, isUploaded, type VideoRow } from "../videos/model";
import { pathVideo, present } from "../videos/present";
import { ProjectQuerySchema, UploadCompleteSchema, VideoSchema } from "../videos/schemas";
import { completeUpload } from "./complete";
import { canonicalParts, partsProblem } from "./parts";
import { recordPart, storedParts } from "./source-queries";

/**
 * A completion naming all 10,000 parts (about 60 bytes each) is larger than the 64 KiB other JSON
 * bodies may be (docs/api-rules.md#videos-and-their-uploads).
 */
const COMPLETION_BODY = jsonBodyOf({ ...JSON_BODY, maxBytes: 2 * 1024 * 1024 });

/** R2's largest part. */
const MAX_PART_BYTES = 5 * 1024 ** 3;

/** A part's number, 1 to 10000, as R2 multipart uploads number them. */
const PartNumberSchema = decimalInt(1, 10_000, "1 to 10000; parts complete in this order");

const uploadPart = route(
  {
    method: "put",
    path: "/v1/videos/{id}/upload/parts/{partNumber}",
    operationId: "uploadPart",
    tags: ["Uploads"],
    summary: "Upload one part of the video's source, streamed to R2",
    description:
      "Raw bytes with a Content-Length. R2's rule, checked when the upload is completed: every part but the " +
      "highest-numbered must be one size, at least 5 MiB (5,242,880 bytes); the last may be smaller. A completion " +
      "that breaks it is `400 invalid_parts`, naming the first part at fault; put that part again, then complete.",
    middleware: [videoWriter] as const,
    request: {
      params: z.object({ id: pathId("video"), partNumber: PartNumberSchema }),
      query: ProjectQuerySchema,
      body: binaryBody(
        ["application/octet-stream"],
        "The part's bytes, with a Content-Length; every part but the last at least 5 MiB (5,242,880 bytes)",
      ),
    },
    responses: {
      200: jsonResponse(z.object({ partNumber: z.int(), etag: z.string() }), "The stored part"),
    },
  },
  ["invalid_body", "video_not_found", "upload_not_active", "upload_completion_in_progress", "payload_too_large"],
);

const complete = route(
  {
    method: "post",
    path: "/v1/videos/{id}/upload/complete",
    operationId: "completeUpload",
    tags: ["Uploads"],
    summary: "Complete the upload from its parts",
    middleware: [videoWriter, idempotent, COMPLETION_BODY] as const,
    request: {
      params: z.object({ id: pathId("video") }),
      query: ProjectQuerySchema,
      body: jsonRequest(UploadCompleteSchema),
    },
    responses: {
      200: jsonResponse(VideoSchema, "The video, uploaded"),
    },
  },
  ["invalid_body", "invalid_parts", "video_not_found", "upload_not_active", "upload_completion_in_progress"],
);

/** Why a live video takes no parts or completion now. */
function refuseUpload(row: VideoRow, now: number): void {
  if (completionInFlight(row, now)) throw new ApiError("upload_completion_in_progress");
  // A tus upload's object owns its multipart upload: parts from elsewhere would break its count.
  if (
    row.tus_upload_id !== null ||
    isUploaded(row.status) ||
    !row.upload_r2_id ||
    !row.upload_expires_at ||
    Date.parse(row.upload_expires_at) <= now
  ) {
    throw new ApiError("upload_not_active");
  }
}

export const uploadRoutes = createRouter()
  .openapi(uploadPart, async (c) => {
    const { id, partNumber } = c.req.valid("param");
    const row = await pathVideo(c, id);
    const now = Date.now();
    refuseUpload(row, now);
    const length = Number(c.req.header("content-length") ?? Number.NaN);
    if (!Number.isInteger(length) || length <= 0 || !c.req.raw.body) {
      throw new ApiError("invalid_body", { message: "A part needs a non-empty body with a Content-Length." });
    }
    if (length > MAX_PART_BYTES) throw new ApiError("payload_too_large");
    const upload = c.env.MEDIA.resumeMultipartUpload(row.source_key, row.upload_r2_id as string);
    try {
      const part = await upload.uploadPart(partNumber, c.req.raw.body);
      // Its size, for the completion's check of R2's part rule (docs/api-rules.md#videos-and-their-uploads).
      await recordPart(
        c.var.db,
        c.var.tenant.projectId,
        row.id,
        { partNumber, size: length, etag: part.etag },
        Date.now(),
      );
      return c.json({ partNumber: part.partNumber, etag: part.etag }, 200);
    } catch (error) {
      // A delete (or completion) that landed meanwhile closed the upload: say so, as it is now.
      refuseUpload(await pathVideo(c, row.id), Date.now());
      throw error;
    }
  })
  .openapi(complete, async (c) => {
    const { parts } = c.req.valid("json");
    const row = await pathVideo(c, c.req.valid("param").id);
    const now = Date.now();
    // A repeat of the completion that made the video uploaded (its answer was lost, say) answers
    // the video again, however far its encoding went; other parts are no completion of this upload
    // (docs/api-rules.md#videos-and-their-uploads).
    if (isUploaded(row.status)) {
      if (row.completed_parts === canonicalParts(parts)) return c.json(present(c, row, now), 200);
      throw new ApiError("upload_not_active");
    }
    refuseUpload(row, now);
    const numbers = parts.map((part) => part.partNumber);
    const problem = partsProblem(numbers, await storedParts(c.var.db, c.var.tenant.projectId, row.id, numbers));
    // Before the lease: the video stays waiting for its upload, its parts kept, for another try.
    if (problem)
      throw new ApiError("invalid_parts", { message: problem, details: [{ path: "parts", message: problem }] });
    const completion = await completeUpload(
      { db: c.var.db, media: c.env.MEDIA, encodeQueue: c.env.ENCODE_QUEUE },
      { tenant: c.var.tenant, videoId: row.id },
      parts,
    );
    switch (completion.outcome) {
      case "uploaded":
        return c.json(present(c, completion.video ?? (await pathVideo(c, row.id))), 200);
      case "parts_refused":
        throw new ApiError("invalid_body", {
          message: "The parts do not complete the upload.",
          details: [
            {
              path: "parts",
              message:
                "every part must have been uploaded with the etag given, and every part but the last must be at least 5 MiB",
            },
          ],
        });
      case "upload_gone":
        throw new ApiError("upload_not_active");
      case "busy":
        // Another request changed the video between the read and the lease: say why, as it is now.
        refuseUpload(await pathVideo(c, row.id), Date.now());
        throw new ApiError("upload_completion_in_progress");
    }
  });
