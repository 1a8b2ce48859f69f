import { z } from "@hono/zod-openapi";
import { pathId, TimestampSchema, textSchema, UlidSchema } from "../http/schemas";
import { ULID_PATTERN_ANY_CASE } from "../lib/ulid";
import { VIDEO_STATUSES, VISIBILITIES } from "./model";

export const VisibilitySchema = z.enum(VISIBILITIES).openapi({ description: "Default public" });

export const ThumbnailSchema = z
  .object({ source: z.enum(["auto", "custom"]), url: z.string().openapi({ format: "uri" }) })
  .openapi("Thumbnail");

export const VideoSchema = z
  .object({
    id: UlidSchema,
    projectId: UlidSchema,
    title: z.string().nullable(),
    status: z.enum(VIDEO_STATUSES),
    visibility: VisibilitySchema,
    thumbnail: ThumbnailSchema,
    createdAt: TimestampSchema,
    updatedAt: TimestampSchema,
  })
  .openapi("Video");

export const VideoCreateSchema = z
  .strictObject({
    title: textSchema().trim().min(1).max(200).optional(),
    visibility: VisibilitySchema.optional(),
  })
  .openapi("VideoCreateRequest");

export const UploadSessionSchema = z.object({ id: UlidSchema, expiresAt: TimestampSchema }).openapi("UploadSession");

export const UploadCompleteSchema = z
  .strictObject({
    parts: z
      .array(z.strictObject({ partNumber: z.int().min(1).max(10_000), etag: z.string().min(1).max(200) }))
      .min(1)
      .max(10_000)
      .refine(
        (parts) => new Set(parts.map((part) => part.partNumber)).size === parts.length,
        "partNumber must not repeat",
      ),
  })
  .openapi("UploadCompleteRequest");

/** Query of video endpoints: `projectId` is read by authentication, under cookie auth only. */
export const ProjectQuerySchema = z.object({
  projectId: z.string().optional().openapi({
    description: "The project's ULID: required under session-cookie auth, ignored under API-key auth",
    pattern: ULID_PATTERN_ANY_CASE.source,
    example: "01JD5Q3V7Y8N2M4K6P9R0S1T2V",
  }),
});

export const VideoParamsSchema = z.object({ id: pathId("video") });
