import { z } from "@hono/zod-openapi";
import type { OpenAPIRegistry } from "../http/openapi";
import { UlidSchema } from "../http/schemas";
import { EVENTS, type EventType } from "./events";
import { DELIVERY_TIMEOUT_MS, RETRY_DELAYS_SECONDS } from "./model";

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

/** A wait as the reference says it: `5 s`, `5 min`, `2 h`. */
export function spokenDuration(seconds: number): string {
  if (seconds % 3600 === 0) return `${seconds / 3600} h`;
  if (seconds % 60 === 0) return `${seconds / 60} min`;
  return `${seconds} s`;
}

/** `a, b and c`. */
function spokenList(items: string[]): string {
  return items.length < 2 ? items.join("") : `${items.slice(0, -1).join(", ")} and ${items.at(-1)}`;
}

/** What delivery promises, said from the constants delivery runs by. */
export const DELIVERY_TERMS =
  `Answer 2xx within ${spokenDuration(DELIVERY_TIMEOUT_MS / 1000)}; anything else is retried after ` +
  `${spokenList(RETRY_DELAYS_SECONDS.map(spokenDuration))}.`;

/**
 * An event type's OpenAPI `webhooks` entry: what an endpoint receives and how to verify it. Every
 * event type is documented by this one function, from the schema that builds its payload.
 */
function registerWebhookDoc(registry: OpenAPIRegistry, type: EventType) {
  const { schema, summary, operationId } = EVENTS[type];
  registry.registerWebhook({
    method: "post",
    path: type,
    operationId,
    tags: ["Webhooks"],
    summary,
    description:
      `POSTed to each enabled endpoint subscribed to \`${type}\`, signed as Standard Webhooks. Verify the ` +
      "signature over the raw body before parsing it (for example with the `standardwebhooks` library), and " +
      `deduplicate on \`webhook-id\`: a retry carries the same id. ${DELIVERY_TERMS} \`410 Gone\` disables the endpoint.`,
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

/** The OpenAPI `webhooks` entries of every event type. */
export function registerWebhookDocs(registry: OpenAPIRegistry) {
  for (const type of Object.keys(EVENTS) as EventType[]) registerWebhookDoc(registry, type);
}
