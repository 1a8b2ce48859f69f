import { z } from "@hono/zod-openapi";
import { TimestampSchema, UlidSchema } from "../http/schemas";
import { VideoSchema } from "./schemas";
import type { Video } from "./video-object";

/**
 * The events of a video's life (deleted, playable, ready, errored): recorded in the outbox in the
 * same D1 batch as the change, then published to the subscribers (webhook delivery among them).
 * One schema per type: it builds the payload, documents the OpenAPI `webhooks` entry
 * (webhooks/docs.ts) and is what tests parse. Every type the service sends is listed in
 * webhooks/events.ts; caption tracks' own events are in captions/events.ts.
 */

/** The one description of a video.deleted event: it builds the event, documents it, and tests read it. */
export const VideoDeletedEventSchema = z
  .strictObject({
    type: z.literal("video.deleted"),
    timestamp: TimestampSchema.openapi({ description: "When the event happened: the deletion time" }),
    data: z.strictObject({
      id: UlidSchema.openapi({ description: "The deleted video" }),
      projectId: UlidSchema,
      deletedAt: TimestampSchema,
    }),
  })
  .openapi("VideoDeletedEvent", { description: "Sent to every enabled endpoint subscribed to video.deleted" });
export type VideoDeletedEvent = z.infer<typeof VideoDeletedEventSchema>;

export function videoDeletedEvent(videoId: string, projectId: string, deletedAt: string): VideoDeletedEvent {
  return VideoDeletedEventSchema.parse({
    type: "video.deleted",
    timestamp: deletedAt,
    data: { id: videoId, projectId, deletedAt },
  });
}

/**
 * The events of encoding (docs/webhooks.md, docs/encoding.md): `data` is the video object as
 * `GET /v1/videos/{id}` shows it at that moment.
 */
function encodingSchema<T extends "video.playable" | "video.ready" | "video.errored">(
  type: T,
  name: string,
  when: string,
) {
  return z
    .strictObject({
      type: z.literal(type),
      timestamp: TimestampSchema.openapi({ description: "When the video became so" }),
      data: VideoSchema,
    })
    .openapi(name, { description: `Sent when a video ${when}` });
}

export const VideoPlayableEventSchema = encodingSchema(
  "video.playable",
  "VideoPlayableEvent",
  "becomes playable, still processing: `playback.hls` plays it and seeks anywhere (`playback.mp4` follows when it is ready)",
);
export const VideoReadyEventSchema = encodingSchema(
  "video.ready",
  "VideoReadyEvent",
  "becomes ready: every rendition and the MP4 are stored",
);
export const VideoErroredEventSchema = encodingSchema(
  "video.errored",
  "VideoErroredEvent",
  "becomes errored: its import or its encoding failed for good (see `data.error`)",
);

export type VideoEncodingEvent =
  | z.infer<typeof VideoPlayableEventSchema>
  | z.infer<typeof VideoReadyEventSchema>
  | z.infer<typeof VideoErroredEventSchema>;

/** The event of a video that has just become playable (still processing), ready or errored. */
export function encodingEvent(video: Video): VideoEncodingEvent {
  const payload = { timestamp: video.updatedAt, data: video };
  switch (video.status) {
    case "ready":
      return VideoReadyEventSchema.parse({ type: "video.ready", ...payload });
    case "errored":
      return VideoErroredEventSchema.parse({ type: "video.errored", ...payload });
    default:
      return VideoPlayableEventSchema.parse({ type: "video.playable", ...payload });
  }
}

/** The video events, each with its schema and how the reference names it (webhooks/events.ts lists every type). */
export const VIDEO_EVENTS = {
  "video.deleted": {
    schema: VideoDeletedEventSchema,
    summary: "A video was deleted",
    operationId: "videoDeletedWebhook",
  },
  "video.playable": {
    schema: VideoPlayableEventSchema,
    summary: "A video can be played",
    operationId: "videoPlayableWebhook",
  },
  "video.ready": { schema: VideoReadyEventSchema, summary: "A video is ready", operationId: "videoReadyWebhook" },
  "video.errored": {
    schema: VideoErroredEventSchema,
    summary: "A video's import or encoding failed",
    operationId: "videoErroredWebhook",
  },
} as const satisfies Record<string, EventEntry>;

/** What the catalog says of an event type: its schema, and how the API reference names it. */
export type EventEntry = { schema: z.ZodType; summary: string; operationId: string };
