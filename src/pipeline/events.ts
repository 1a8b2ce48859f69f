import { z } from "@hono/zod-openapi";
import { registerWebhookDoc } from "../events/types";
import type { OpenAPIRegistry } from "../http/openapi";
import { TimestampSchema } from "../http/schemas";
import type { Video } from "../videos/model";
import { VideoSchema } from "../videos/schemas";

/**
 * The events of encoding (contract sections 10, 12 and 15): `data` is the video object as
 * `GET /v1/videos/{id}` shows it at that moment. Each schema builds its payload and documents it.
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
  "becomes errored: its encoding failed for good (see `data.error`)",
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

export function registerEncodingWebhookDocs(registry: OpenAPIRegistry) {
  registerWebhookDoc(
    registry,
    "video.playable",
    VideoPlayableEventSchema,
    "A video can be played",
    "videoPlayableWebhook",
  );
  registerWebhookDoc(registry, "video.ready", VideoReadyEventSchema, "A video is ready", "videoReadyWebhook");
  registerWebhookDoc(
    registry,
    "video.errored",
    VideoErroredEventSchema,
    "A video's encoding failed",
    "videoErroredWebhook",
  );
}
