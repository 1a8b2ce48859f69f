import { z } from "@hono/zod-openapi";
import { registerWebhookDoc } from "../events/types";
import type { OpenAPIRegistry } from "../http/openapi";
import { TimestampSchema } from "../http/schemas";
import type { Video } from "../videos/model";
import { VideoSchema } from "../videos/schemas";

/**
 * The events of encoding (contract sections 10 and 12): `data` is the video object as
 * `GET /v1/videos/{id}` shows it at that moment. Each schema builds its payload and documents it.
 */
function outcomeSchema<T extends "video.ready" | "video.errored">(type: T, name: string, when: string) {
  return z
    .strictObject({
      type: z.literal(type),
      timestamp: TimestampSchema.openapi({ description: "When the video became ready or errored" }),
      data: VideoSchema,
    })
    .openapi(name, { description: `Sent when a video becomes ${when}` });
}

export const VideoReadyEventSchema = outcomeSchema("video.ready", "VideoReadyEvent", "ready to play");
export const VideoErroredEventSchema = outcomeSchema(
  "video.errored",
  "VideoErroredEvent",
  "errored: its encoding failed for good (see `data.error`)",
);

export type VideoOutcomeEvent = z.infer<typeof VideoReadyEventSchema> | z.infer<typeof VideoErroredEventSchema>;

/** The event of a video that has just become ready or errored. */
export function outcomeEvent(video: Video): VideoOutcomeEvent {
  if (video.status === "ready") {
    return VideoReadyEventSchema.parse({ type: "video.ready", timestamp: video.updatedAt, data: video });
  }
  return VideoErroredEventSchema.parse({ type: "video.errored", timestamp: video.updatedAt, data: video });
}

export function registerEncodingWebhookDocs(registry: OpenAPIRegistry) {
  registerWebhookDoc(registry, "video.ready", VideoReadyEventSchema, "A video is ready to play", "videoReadyWebhook");
  registerWebhookDoc(
    registry,
    "video.errored",
    VideoErroredEventSchema,
    "A video's encoding failed",
    "videoErroredWebhook",
  );
}
