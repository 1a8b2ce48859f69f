import { z } from "@hono/zod-openapi";
import { TimestampSchema, UlidSchema } from "../http/schemas";
import type { EventEntry } from "../videos/events";
import type { Track } from "./model";
import { TrackSchema } from "./schemas";

/**
 * A generated caption track's events (docs/generated-captions.md): made (`ready`) or failed
 * (`errored`); a track skipped (no audio, no speech) sends none. `data` names the video and shows
 * the track as `GET /v1/videos/{id}/captions` does. A video has one of each per track made (the
 * outbox tells them apart by the track's generation).
 */
function trackEventSchema<T extends "video.captions.ready" | "video.captions.errored">(
  type: T,
  name: string,
  when: string,
) {
  return z
    .strictObject({
      type: z.literal(type),
      timestamp: TimestampSchema.openapi({ description: "When the track became so" }),
      data: z.strictObject({
        id: UlidSchema.openapi({ description: "The video" }),
        projectId: UlidSchema,
        track: TrackSchema,
      }),
    })
    .openapi(name, { description: `Sent when a generated caption track ${when}` });
}

export const CaptionsReadyEventSchema = trackEventSchema(
  "video.captions.ready",
  "VideoCaptionsReadyEvent",
  "is ready: it plays in the master playlist and the embed page",
);
export const CaptionsErroredEventSchema = trackEventSchema(
  "video.captions.errored",
  "VideoCaptionsErroredEvent",
  "could not be made (see `data.track.error`)",
);

export type CaptionsEvent = z.infer<typeof CaptionsReadyEventSchema> | z.infer<typeof CaptionsErroredEventSchema>;

/** The event of a generated track that has just become ready or errored. */
export function trackEvent(video: { id: string; projectId: string }, track: Track, at: string): CaptionsEvent {
  const payload = { timestamp: at, data: { id: video.id, projectId: video.projectId, track } };
  return track.status === "ready"
    ? CaptionsReadyEventSchema.parse({ type: "video.captions.ready", ...payload })
    : CaptionsErroredEventSchema.parse({ type: "video.captions.errored", ...payload });
}

export const CAPTION_EVENTS = {
  "video.captions.ready": {
    schema: CaptionsReadyEventSchema,
    summary: "A generated caption track is ready",
    operationId: "videoCaptionsReadyWebhook",
  },
  "video.captions.errored": {
    schema: CaptionsErroredEventSchema,
    summary: "A generated caption track could not be made",
    operationId: "videoCaptionsErroredWebhook",
  },
} as const satisfies Record<string, EventEntry>;
