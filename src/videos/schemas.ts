import { z } from "@hono/zod-openapi";
import { ModeQuerySchema } from "../auth/guards";
import { livemodeSchema, pathId, TimestampSchema, textSchema, UlidSchema } from "../http/schemas";
import { parseUlid, ULID_PATTERN_ANY_CASE } from "../lib/ulid";
import { ITEM_CODES, VIDEO_STATUSES, VISIBILITIES } from "./model";

export const VisibilitySchema = z.enum(VISIBILITIES).openapi({ description: "Default public" });

export const ThumbnailSchema = z
  .object({ source: z.enum(["auto", "custom"]), url: z.string().openapi({ format: "uri" }) })
  .openapi("Thumbnail");

export const RenditionSchema = z
  .object({ resolution: z.string().openapi({ example: "720p" }), width: z.int(), height: z.int() })
  .openapi("Rendition");

export const PlaybackSchema = z
  .object({
    hls: z.string().openapi({ format: "uri", description: "The HLS master playlist" }),
    mp4: z.string().nullable().openapi({
      format: "uri",
      description: "The MP4 fallback, when the project asked for it; null until the video is ready",
    }),
  })
  .openapi("Playback");

export const VideoErrorSchema = z
  .object({ code: z.enum(["invalid_source", "encoding_failed"]), message: z.string() })
  .openapi("VideoError");

export const VideoSchema = z
  .object({
    id: UlidSchema,
    projectId: UlidSchema,
    livemode: livemodeSchema(
      "A test video is encoded from its first 10 seconds only, and deleted 24 hours after its creation, as " +
        "DELETE deletes it (its video.deleted event included).",
    ),
    title: z.string().nullable().openapi({ example: "Intro" }),
    status: z.enum(VIDEO_STATUSES),
    visibility: VisibilitySchema,
    thumbnail: ThumbnailSchema,
    duration: z.number().nullable().openapi({ description: "Seconds; null until the source has been probed" }),
    width: z.int().nullable().openapi({ description: "The source's display width; null until probed" }),
    height: z.int().nullable().openapi({ description: "The source's display height; null until probed" }),
    renditions: z.array(RenditionSchema).openapi({ description: "Lowest first; empty until the video is ready" }),
    playback: PlaybackSchema.nullable().openapi({
      description:
        "null until the video is playable: within seconds of its upload, while it is still processing (its HLS plays " +
        "and seeks anywhere; what is not encoded yet is encoded as it is asked for), and from then on",
    }),
    error: VideoErrorSchema.nullable().openapi({ description: "null unless the video is errored" }),
    createdAt: TimestampSchema,
    updatedAt: TimestampSchema,
  })
  .openapi("Video");

/** The filters of the video list (contract §5); a value outside its set is `invalid_query`. */
export const VideoFilterSchema = z.object({
  status: z.enum(VIDEO_STATUSES).optional().openapi({ description: "Only videos with this status" }),
  visibility: VisibilitySchema.optional().openapi({ description: "Only videos with this visibility" }),
});

/** An edit of a video (contract §14): only the fields sent change; a null title clears it. */
export const VideoPatchSchema = z
  .strictObject({
    title: textSchema().trim().min(1).max(200).nullable().optional().openapi({ example: "Intro" }),
    visibility: VisibilitySchema.optional(),
  })
  .openapi("VideoPatch");

export const VideoCreateSchema = z
  .strictObject({
    title: textSchema().trim().min(1).max(200).optional().openapi({ example: "Intro" }),
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

/**
 * Query of video endpoints: `projectId` and `mode` are read by authentication, under cookie auth
 * only.
 */
export const ProjectQuerySchema = ModeQuerySchema.extend({
  projectId: z.string().optional().openapi({
    description: "The project's ULID: required under session-cookie auth, ignored under API-key auth",
    pattern: ULID_PATTERN_ANY_CASE.source,
    example: "01JD5Q3V7Y8N2M4K6P9R0S1T2V",
  }),
});

export const VideoParamsSchema = z.object({ id: pathId("video") });

/** A bulk request names 1 to this many videos. */
export const MAX_BULK_IDS = 100;

export const VideoIdsSchema = z
  .array(
    z
      .string()
      .refine((id) => parseUlid(id) !== null, "must be a ULID")
      .openapi({ description: "A video's ULID (case-insensitive)", pattern: ULID_PATTERN_ANY_CASE.source }),
  )
  .min(1)
  .max(MAX_BULK_IDS);

export const BulkRequestSchema = z
  .discriminatedUnion("action", [
    z.strictObject({ action: z.literal("delete"), videoIds: VideoIdsSchema }),
    z.strictObject({ action: z.literal("set_visibility"), videoIds: VideoIdsSchema, visibility: VisibilitySchema }),
  ])
  .openapi("VideoBulkRequest");

export const BulkResultSchema = z
  .union([
    z.object({ id: UlidSchema, ok: z.literal(true) }),
    z.object({
      id: UlidSchema,
      ok: z.literal(false),
      error: z.object({
        code: z.enum(ITEM_CODES),
        message: z.string(),
      }),
    }),
  ])
  .openapi("VideoBulkResult");
