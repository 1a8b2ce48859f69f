import { z } from "@hono/zod-openapi";
import type { OpenAPIRegistry } from "../http/openapi";
import { TimestampSchema, UlidSchema } from "../http/schemas";

/**
 * Events: what happened, recorded in the outbox in the same D1 batch as the change, then published
 * to the subscribers (webhook delivery among them). One schema per type: it builds the payload,
 * documents the OpenAPI `webhooks` entry and is what tests parse.
 */
export const EVENT_TYPES = ["video.deleted", "video.playable", "video.ready", "video.errored"] as const;
export type EventType = (typeof EVENT_TYPES)[number];

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

const SignatureHeaders = z.object({
  "webhook-id": UlidSchema.openapi({ description: "The event's id: the same for every attempt of it" }),
  "webhook-timestamp": z
    .string()
    .openapi({ description: "Unix seconds when this attempt was signed", example: "1795327200" }),
  "webhook-signature": z.string().openapi({
    description:
      'Space-separated `v1,<base64 HMAC-SHA256 of "id.timestamp.body">`, keyed by the base64 part of the endpoint ' +
      "secret (after `whsec_`); for 24 h after a rotation, the new secret's signature first, then the old one's",
    example: "v1,K5oZfzN95Z9UVu1EsfQmfVNQhnkZ2pj9o9NDN/H/pI4=",
  }),
});

/**
 * An event type's OpenAPI `webhooks` entry: what an endpoint receives and how to verify it. Every
 * event type is documented by this one function, from the schema that builds its payload.
 */
export function registerWebhookDoc(
  registry: OpenAPIRegistry,
  type: EventType,
  schema: z.ZodType,
  summary: string,
  operationId: string,
) {
  registry.registerWebhook({
    method: "post",
    path: type,
    operationId,
    tags: ["Webhooks"],
    summary,
    description:
      `POSTed to each enabled endpoint subscribed to \`${type}\`, signed as Standard Webhooks. Verify the ` +
      "signature over the raw body before parsing it (for example with the `standardwebhooks` library), and " +
      "deduplicate on `webhook-id`: a retry carries the same id. Answer 2xx within 15 s; anything else is retried " +
      "after 5 s, 5 min, 30 min, 2 h, 5 h, 10 h and 10 h. `410 Gone` disables the endpoint.",
    security: [],
    request: {
      headers: SignatureHeaders,
      body: { required: true, content: { "application/json": { schema } } },
    },
    responses: {
      200: { description: "Any 2xx: delivered" },
      410: { description: "The endpoint is gone: it is disabled and gets nothing more" },
    },
  });
}

/** The OpenAPI `webhooks` entry of video.deleted. */
export function registerWebhookDocs(registry: OpenAPIRegistry) {
  registerWebhookDoc(registry, "video.deleted", VideoDeletedEventSchema, "A video was deleted", "videoDeletedWebhook");
}
