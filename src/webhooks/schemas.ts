import { z } from "@hono/zod-openapi";
import { PageQuerySchema } from "../http/pagination";
import { livemodeSchema, TimestampSchema, textSchema, UlidSchema } from "../http/schemas";
import { EVENT_TYPES } from "./events";
import { DELIVERY_ERRORS, DELIVERY_STATES, DISABLED_REASONS } from "./model";

/** The webhook routes' request and response schemas (the OpenAPI document comes from them). */

export const EventTypesSchema = z
  .array(z.enum(EVENT_TYPES))
  .min(1)
  .refine((types) => new Set(types).size === types.length, "event types must not repeat");
export const DescriptionSchema = textSchema().max(500).nullable().openapi({ example: "Production receiver" });

export const EndpointCreateSchema = z
  .strictObject({
    url: textSchema().max(2048).openapi({ format: "uri", example: "https://example.com/hooks" }),
    eventTypes: EventTypesSchema.optional(),
    description: DescriptionSchema.optional(),
  })
  .openapi("WebhookEndpointCreateRequest");

export const EndpointPatchSchema = z
  .strictObject({
    url: textSchema().max(2048).optional().openapi({ format: "uri", example: "https://example.com/hooks" }),
    eventTypes: EventTypesSchema.optional(),
    description: DescriptionSchema.optional(),
    enabled: z.boolean().optional().openapi({ description: "true re-enables an endpoint disabled for any reason" }),
  })
  .openapi("WebhookEndpointPatch");

export const EndpointSchema = z
  .object({
    id: UlidSchema,
    livemode: livemodeSchema("It receives the events of its own mode's videos only."),
    url: z.string().openapi({ format: "uri", example: "https://example.com/hooks" }),
    eventTypes: z.array(z.enum(EVENT_TYPES)),
    enabled: z.boolean(),
    disabledReason: z
      .enum(DISABLED_REASONS)
      .nullable()
      .openapi({ description: "gone: it answered 410 Gone; manual: disabled through PATCH" }),
    description: z.string().nullable(),
    createdAt: TimestampSchema,
  })
  .openapi("WebhookEndpoint");

export const CreatedEndpointSchema = EndpointSchema.extend({
  secret: z.string().openapi({
    description: "whsec_…: shown only in this response",
    example: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
  }),
}).openapi("CreatedWebhookEndpoint");

export const DeliverySchema = z
  .object({
    id: UlidSchema,
    endpointId: UlidSchema,
    eventId: UlidSchema,
    eventType: z.enum(EVENT_TYPES),
    state: z.enum(DELIVERY_STATES),
    attempt: z.int(),
    responseStatus: z.int().nullable(),
    error: z.enum(DELIVERY_ERRORS).nullable(),
    durationMs: z.int().nullable(),
    createdAt: TimestampSchema,
    completedAt: TimestampSchema.nullable(),
    nextRetryAt: TimestampSchema.nullable(),
  })
  .openapi("WebhookDeliveryAttempt");

export const DeliveriesQuerySchema = PageQuerySchema.extend({
  state: z.enum(DELIVERY_STATES).optional().openapi({ description: "pending, succeeded or failed" }),
  eventType: z.string().max(100).optional().openapi({ example: "video.deleted" }),
});
