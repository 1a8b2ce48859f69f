import { z } from "@hono/zod-openapi";
import { ModeQuerySchema } from "../auth/guards";
import { livemodeSchema, pathId, TimestampSchema, textSchema, UlidSchema } from "../http/schemas";
import { canonicalLanguage } from "../lib/language";
import { MAX_ALLOWED_ORIGINS, normalizeOriginPattern } from "../lib/origins";
import { utcTime } from "../lib/time";
import { parseUlid, ULID_PATTERN_ANY_CASE } from "../lib/ulid";
import { ITEM_CODES, VIDEO_ERROR_CODES, VIDEO_STATUSES, VISIBILITIES } from "./model";
import { metadataObject } from "./video-object";

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
    m4a: z
      .string()
      .nullable()
      .openapi({
        format: "uri",
        description:
          "The audio only (`audio/mp4`, AAC, the whole duration, byte ranges as the MP4): every ready video whose " +
          "source has audio has one; null for a silent video, and until the video is ready",
      }),
  })
  .openapi("Playback");

export const VideoErrorSchema = z
  .object({ code: z.enum(VIDEO_ERROR_CODES), message: z.string() })
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
    tags: z.array(z.string()).openapi({ description: "At most 20; default []" }),
    metadata: stringPairs(z.string(), z.string())
      .transform(metadataObject)
      .openapi({
        type: "object",
        additionalProperties: { type: "string" },
        description: "At most 20 string pairs; default {}",
      }),
    allowedOrigins: z.array(z.string()).openapi({
      description: "The origins whose pages may play and frame the video; [] allows any",
      example: ["https://example.com", "https://*.example.com"],
    }),
    createdAt: TimestampSchema,
    updatedAt: TimestampSchema,
  })
  .openapi("Video");

export const MAX_TAGS = 20;
export const MAX_METADATA_PAIRS = 20;
/**
 * A metadata key (docs/import-clips-search.md#search-get-v1videos), in a body and in a
 * `metadata[<key>]` filter alike.
 */
export const METADATA_KEY = /^[A-Za-z0-9_.-]{1,40}$/;

const TagSchema = textSchema().min(1).max(50);
export const TagsSchema = z
  .array(TagSchema)
  .max(MAX_TAGS)
  .transform((tags) => [...new Set(tags)])
  .openapi({
    description: `At most ${MAX_TAGS} tags, each 1–50 characters (a repeated one is kept once)`,
    example: ["launch"],
  });

const MetadataKeySchema = z.string().regex(METADATA_KEY, "keys are 1–40 characters of [A-Za-z0-9_.-]");
const MAX_METADATA_VALUE = 500;
const MetadataValueSchema = textSchema().max(MAX_METADATA_VALUE);

/**
 * String pairs by key (a video's metadata, an edit of it), read as a Map and handed on as an object
 * without a prototype (`metadataObject`). zod's record skips a `__proto__` key (so that assigning it
 * cannot set a prototype), which the key pattern allows: the pair would be dropped without a word
 * and its value never checked. Here every key is checked by `key` and every value by `value`, the
 * `__proto__` pair included. The document cannot read a Map: each use says, with `.openapi()`,
 * the JSON object it is on the wire.
 */
function stringPairs<K extends z.ZodType<string>, V extends z.ZodType>(key: K, value: V) {
  return z.preprocess(
    (input) =>
      typeof input === "object" && input !== null && !Array.isArray(input) ? new Map(Object.entries(input)) : input,
    z.map(key, value, { error: "must be an object of string pairs" }),
  );
}

export const MetadataSchema = stringPairs(MetadataKeySchema, MetadataValueSchema)
  .refine((pairs) => pairs.size <= MAX_METADATA_PAIRS, `at most ${MAX_METADATA_PAIRS} pairs`)
  .transform(metadataObject)
  .openapi({
    type: "object",
    additionalProperties: { type: "string", maxLength: MAX_METADATA_VALUE },
    description: "String pairs: keys 1–40 characters of [A-Za-z0-9_.-], values at most 500 characters",
  });

/** A metadata edit: merge-patched, a key set to null is removed (the result holds at most 20 pairs). */
export const MetadataPatchSchema = stringPairs(MetadataKeySchema, MetadataValueSchema.nullable())
  .transform(metadataObject)
  .openapi({
    type: "object",
    additionalProperties: { type: ["string", "null"], maxLength: MAX_METADATA_VALUE },
    description: "Merged into the video's metadata; a key set to null is removed",
  });

export const AllowedOriginsSchema = z
  .array(
    z.string().transform((pattern, ctx) => {
      const normal = normalizeOriginPattern(pattern);
      if (normal === null) {
        ctx.addIssue({ code: "custom", message: "must be scheme://host, with *. only as the host's first label" });
        return z.NEVER;
      }
      return normal;
    }),
  )
  .max(MAX_ALLOWED_ORIGINS)
  .transform((origins) => [...new Set(origins)])
  .openapi({
    description: `At most ${MAX_ALLOWED_ORIGINS} origins (scheme and host, \`*.\` only as the host's first label); [] allows any`,
    example: ["https://example.com", "https://*.example.com"],
  });

const ISO_TIMESTAMP =
  /^(\d{4})-(\d{2})-(\d{2})(?:T(\d{2}):(\d{2})(?::(\d{2})(?:\.\d{1,9})?)?(?:Z|[+-](\d{2}):(\d{2})))?$/;

/** The instant an ISO 8601 timestamp names, or NaN when it names none (`2026-02-30`, `T24:00`, `+25:00`). */
function isoInstant(text: string): number {
  const match = ISO_TIMESTAMP.exec(text);
  if (!match) return Number.NaN;
  const fields = match.slice(1).map((field) => Number(field ?? 0));
  const [year = 0, month = 0, day = 0, hour = 0, minute = 0, second = 0, offsetHours = 0, offsetMinutes = 0] = fields;
  const exists = utcTime(year, month, day, hour, minute, second) !== null;
  return exists && offsetHours < 24 && offsetMinutes < 60 ? Date.parse(text) : Number.NaN;
}

/** An ISO 8601 timestamp of a query, as the canonical UTC form with milliseconds that created_at has. */
function queryTimestamp(description: string) {
  return z
    .string()
    .transform((text, ctx) => {
      const time = isoInstant(text);
      if (Number.isNaN(time)) {
        ctx.addIssue({ code: "custom", message: "must be an ISO 8601 timestamp" });
        return z.NEVER;
      }
      return new Date(time).toISOString();
    })
    .optional()
    .openapi({ description, format: "date-time", example: "2026-11-22T06:00:00.000Z" });
}

/**
 * The filters of the video list (docs/api-rules.md#videos-and-their-uploads,
 * docs/import-clips-search.md#search-get-v1videos); a malformed value is `invalid_query`.
 * `metadata[<key>]=<value>` filters are read beside these (a query schema cannot name their keys).
 */
export const VideoFilterSchema = z.object({
  status: z.enum(VIDEO_STATUSES).optional().openapi({ description: "Only videos with this status" }),
  visibility: VisibilitySchema.optional().openapi({ description: "Only videos with this visibility" }),
  tag: z
    .union([TagSchema, z.array(TagSchema).max(MAX_TAGS)])
    .optional()
    .openapi({ description: "Repeatable: only videos that have every tag given" }),
  search: textSchema().min(1).max(200).optional().openapi({
    description: "Words of the title, each matching a title word or its prefix, case- and accent-insensitive",
  }),
  // Read from the raw query by metadataFilters (its keys are `metadata[<key>]`), declared here for the document.
  metadata: z
    .record(z.string(), z.string())
    .optional()
    .openapi({
      param: { style: "deepObject", explode: true },
      description:
        "`metadata[<key>]=<value>`: only videos whose metadata has that exact pair (repeatable for other keys)",
      example: { team: "blue" },
    }),
  createdAfter: queryTimestamp("Only videos created after this instant (exclusive)"),
  createdBefore: queryTimestamp("Only videos created before this instant (exclusive)"),
});

/**
 * An edit of a video (docs/api-rules.md#videos-and-their-uploads): only the fields sent change; a
 * null title clears it.
 */
export const VideoPatchSchema = z
  .strictObject({
    title: textSchema().trim().min(1).max(200).nullable().optional().openapi({ example: "Intro" }),
    visibility: VisibilitySchema.optional(),
    tags: TagsSchema.optional(),
    metadata: MetadataPatchSchema.optional(),
    allowedOrigins: AllowedOriginsSchema.optional(),
  })
  .openapi("VideoPatch");

/** A clip is at least this long (docs/import-clips-search.md#clips-as-videos-clipof). */
export const MIN_CLIP_SECONDS = 1;

/**
 * A frame-accurate clip of another video, as a new video
 * (docs/import-clips-search.md#clips-as-videos-clipof): its span in seconds.
 */
export const ClipOfSchema = z
  .strictObject({
    videoId: z.string().openapi({ description: "The video to cut the clip from (processing or ready)" }),
    start: z.number().min(0).openapi({ description: "Seconds into that video", example: 12.5 }),
    end: z
      .number()
      .openapi({ description: `Seconds into that video, at least ${MIN_CLIP_SECONDS} s after start`, example: 20 }),
  })
  .refine((clip) => clip.end - clip.start >= MIN_CLIP_SECONDS, {
    path: ["end"],
    message: `must be at least ${MIN_CLIP_SECONDS} s after start`,
  })
  .openapi("ClipOf", {
    description: "Encode a new video from this span of another video's source (frame-accurate); it outlives that video",
  });

/** What a caller chooses of any new video: one uploaded (the part API's, a tus upload's), imported or clipped. */
const videoFields = {
  title: textSchema().trim().min(1).max(200).optional().openapi({ example: "Intro" }),
  visibility: VisibilitySchema.optional(),
  tags: TagsSchema.optional(),
  metadata: MetadataSchema.optional(),
  allowedOrigins: AllowedOriginsSchema.optional(),
};

/**
 * The video a tus direct upload creates (docs/api-guide.md#direct-uploads-from-a-browser-tus): its
 * fields, and no other source.
 */
export const UploadedVideoSchema = z.strictObject(videoFields).openapi("UploadedVideoRequest");

/** The most caption languages a creation may ask to be generated. */
export const MAX_GENERATED_CAPTIONS = 5;

/**
 * Caption languages to generate once the video is playable (docs/generated-captions.md): BCP 47
 * tags, kept in their canonical case, none twice.
 */
const GeneratedCaptionsSchema = z
  .array(
    z
      .string()
      .max(35)
      .transform((tag, ctx) => {
        const language = canonicalLanguage(tag);
        if (!language) ctx.addIssue({ code: "custom", message: "not a BCP 47 language tag" });
        return language ?? tag;
      }),
  )
  .max(MAX_GENERATED_CAPTIONS)
  .refine((languages) => new Set(languages).size === languages.length, "a language must not repeat")
  .openapi({
    description:
      `Caption languages (BCP 47, at most ${MAX_GENERATED_CAPTIONS}) to generate from the speech as soon as the ` +
      "video is playable, as `POST /v1/videos/{id}/captions/{language}/generate` would then",
    example: ["en"],
  });

export const VideoCreateSchema = z
  .strictObject({
    ...videoFields,
    generatedCaptions: GeneratedCaptionsSchema.optional(),
    visibility: VisibilitySchema.optional().openapi({
      description: "Default public; a clip (`clipOf`) takes the visibility of the video it is cut from",
    }),
    clipOf: ClipOfSchema.optional(),
    // Text as every field is: the URL parser would drop a tab or a line break silently.
    sourceUrl: textSchema()
      .max(2048)
      .optional()
      .openapi({
        format: "uri",
        description:
          "Import the video from this URL instead of uploading it: a public https:// address (http:// " +
          "and loopback only where webhooks may use them, in local development), each redirect checked again. The " +
          "answer has no `upload`; the video is `importing` until its source is stored, then goes on as an upload does.",
        example: "https://media.example.com/intro.mp4",
      }),
  })
  .refine((body) => body.clipOf === undefined || body.sourceUrl === undefined, {
    path: ["sourceUrl"],
    message: "give either sourceUrl or clipOf, not both",
  })
  .openapi("VideoCreateRequest", {
    example: { title: "Intro", visibility: "public", tags: ["launch"], metadata: { team: "blue" } },
  });

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
