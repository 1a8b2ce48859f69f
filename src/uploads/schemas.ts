import { z } from "@hono/zod-openapi";
import { livemodeSchema, pathId, TimestampSchema, UlidSchema } from "../http/schemas";
import { UploadedVideoSchema, VideoSchema } from "../videos/schemas";
import { MAX_UPLOAD_BYTES } from "./tus/protocol";

/** `*`, or an origin: `scheme://host[:port]`, nothing after it. Stored as the URL standard writes it. */
const CorsOriginSchema = z
  .string()
  .max(300)
  .transform((text, ctx) => {
    if (text === "*") return text;
    try {
      const url = new URL(text);
      if ((url.protocol === "https:" || url.protocol === "http:") && url.origin.toLowerCase() === text.toLowerCase()) {
        return url.origin;
      }
    } catch {
      // not a URL: refused below
    }
    ctx.addIssue({ code: "custom", message: 'must be "*" or an origin, scheme://host[:port] with no path' });
    return z.NEVER;
  })
  .openapi({ type: "string", example: "https://app.example.com", description: 'An origin, or "*" (default)' });

export const DirectUploadCreateSchema = z
  .strictObject({
    video: UploadedVideoSchema.optional(),
    corsOrigin: CorsOriginSchema.optional(),
    expiresIn: z.int().min(60).max(86_400).optional().openapi({ description: "Seconds, default 3600" }),
    maxSizeBytes: z
      .int()
      .min(1)
      .max(MAX_UPLOAD_BYTES)
      .optional()
      .openapi({ description: "The largest Upload-Length the URL accepts; default and at most 50 GiB" }),
  })
  .openapi("DirectUploadCreateRequest");

const UploadLivemodeSchema = livemodeSchema("The upload's video has the same mode.");

export const DirectUploadSchema = z
  .object({
    id: UlidSchema,
    livemode: UploadLivemodeSchema,
    url: z.string().openapi({ format: "uri", description: "The tus 1.0.0 creation URL; its own credential" }),
    expiresAt: TimestampSchema,
    video: VideoSchema,
  })
  .openapi("DirectUpload");

export const UPLOAD_STATUSES = ["waiting", "uploading", "completed", "cancelled", "expired"] as const;
export type UploadStatus = (typeof UPLOAD_STATUSES)[number];

export const UploadProgressSchema = z
  .object({
    id: UlidSchema,
    livemode: UploadLivemodeSchema,
    url: z.string().openapi({ format: "uri" }),
    expiresAt: TimestampSchema,
    videoId: UlidSchema,
    status: z.enum(UPLOAD_STATUSES),
    offset: z.int().openapi({ description: "Bytes held" }),
    length: z.int().nullable().openapi({ description: "The Upload-Length; null until the upload is created" }),
  })
  .openapi("DirectUploadProgress");

export const UploadParamsSchema = z.object({ id: pathId("upload") });
