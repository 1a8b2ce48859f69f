import { z } from "@hono/zod-openapi";
import type { Context } from "hono";
import { authenticate } from "../auth/middleware";
import { jsonBody } from "../http/body";
import type { AppEnv } from "../http/context";
import { ApiError } from "../http/errors";
import { PAGE_QUERY_CODES, PageQuerySchema, pageOf, parsePage } from "../http/pagination";
import { route } from "../http/route";
import { createRouter } from "../http/router";
import { jsonRequest, jsonResponse, TimestampSchema, UlidSchema } from "../http/schemas";
import { validationHook } from "../http/validation";
import { isoTime } from "../lib/time";
import { parseUlid, ulid } from "../lib/ulid";
import { rateLimit } from "../rate-limit/middleware";
import { DELIVERY_STATES, type DeliveryState, type EndpointRow, EVENT_TYPES, toDelivery, toEndpoint } from "./model";
import { enqueue } from "./outbox";
import {
  deleteEndpoint,
  findDelivery,
  findEndpoint,
  insertEndpoint,
  insertRetryAttempt,
  listDeliveries,
  listEndpoints,
} from "./queries";
import { newSecret } from "./signing";

const EndpointCreateSchema = z
  .strictObject({
    url: z.string().max(2048),
    eventTypes: z
      .array(z.enum(EVENT_TYPES))
      .min(1)
      .refine((types) => new Set(types).size === types.length, "event types must not repeat")
      .optional(),
    description: z.string().max(500).nullable().optional(),
  })
  .openapi("WebhookEndpointCreateRequest");

const EndpointSchema = z
  .object({
    id: UlidSchema,
    url: z.string(),
    eventTypes: z.array(z.enum(EVENT_TYPES)),
    enabled: z.boolean(),
    description: z.string().nullable(),
    createdAt: TimestampSchema,
  })
  .openapi("WebhookEndpoint");

const CreatedEndpointSchema = EndpointSchema.extend({
  secret: z.string().openapi({ description: "whsec_…: shown only in this response" }),
}).openapi("CreatedWebhookEndpoint");

const DeliverySchema = z
  .object({
    id: UlidSchema,
    endpointId: UlidSchema,
    eventId: UlidSchema,
    eventType: z.string(),
    state: z.enum(DELIVERY_STATES),
    attempt: z.int(),
    responseStatus: z.int().nullable(),
    error: z.string().nullable(),
    durationMs: z.int().nullable(),
    createdAt: TimestampSchema,
    completedAt: TimestampSchema.nullable(),
    nextRetryAt: TimestampSchema.nullable(),
  })
  .openapi("WebhookDeliveryAttempt");

const project = (scope: "read" | "write", notFound: "not_found" | "endpoint_not_found") =>
  authenticate({ accept: "any", scope, project: { from: "path", param: "projectId", notFound } });

const ProjectParams = z.object({ projectId: z.string() });
const EndpointParams = z.object({ projectId: z.string(), id: z.string() });

const create = route(
  {
    method: "post",
    path: "/v1/projects/{projectId}/webhook-endpoints",
    tags: ["Webhooks"],
    summary: "Add a webhook endpoint; its signing secret is shown only in this response",
    middleware: [project("write", "not_found"), jsonBody] as const,
    request: { params: ProjectParams, body: jsonRequest(EndpointCreateSchema) },
    responses: { 201: jsonResponse(CreatedEndpointSchema, "The endpoint, with its secret") },
  },
  ["invalid_body"],
);

const list = route({
  method: "get",
  path: "/v1/projects/{projectId}/webhook-endpoints",
  tags: ["Webhooks"],
  summary: "The project's webhook endpoints",
  middleware: [project("read", "not_found")] as const,
  request: { params: ProjectParams },
  responses: { 200: jsonResponse(z.object({ data: z.array(EndpointSchema) }), "The endpoints") },
});

const read = route(
  {
    method: "get",
    path: "/v1/projects/{projectId}/webhook-endpoints/{id}",
    tags: ["Webhooks"],
    summary: "One webhook endpoint",
    middleware: [project("read", "endpoint_not_found")] as const,
    request: { params: EndpointParams },
    responses: { 200: jsonResponse(EndpointSchema, "The endpoint") },
  },
  ["endpoint_not_found"],
);

const remove = route(
  {
    method: "delete",
    path: "/v1/projects/{projectId}/webhook-endpoints/{id}",
    tags: ["Webhooks"],
    summary: "Delete a webhook endpoint and its delivery attempts",
    middleware: [project("write", "endpoint_not_found")] as const,
    request: { params: EndpointParams },
    responses: { 204: { description: "Deleted" } },
  },
  ["endpoint_not_found"],
);

const DeliveriesQuerySchema = PageQuerySchema.extend({
  state: z.string().optional().openapi({ description: "pending, succeeded or failed" }),
  eventType: z.string().optional().openapi({ example: "video.deleted" }),
});

const deliveries = route(
  {
    method: "get",
    path: "/v1/projects/{projectId}/webhook-endpoints/{id}/deliveries",
    tags: ["Webhooks"],
    summary: "The endpoint's delivery attempts, newest first (createdAt, then id)",
    middleware: [project("read", "endpoint_not_found"), rateLimit("deliveries")] as const,
    request: { params: EndpointParams, query: DeliveriesQuerySchema },
    responses: {
      200: jsonResponse(z.object({ data: z.array(DeliverySchema), nextCursor: z.string().nullable() }), "One page"),
    },
  },
  ["endpoint_not_found", "invalid_limit", "invalid_cursor", "invalid_state"],
);

const retry = route(
  {
    method: "post",
    path: "/v1/projects/{projectId}/webhook-endpoints/{id}/deliveries/{attemptId}/retry",
    tags: ["Webhooks"],
    summary: "Send the attempt's event to the endpoint again, as a new attempt",
    middleware: [project("write", "endpoint_not_found")] as const,
    request: { params: EndpointParams.extend({ attemptId: z.string() }) },
    responses: { 202: jsonResponse(DeliverySchema, "The new attempt, pending") },
  },
  ["endpoint_not_found", "not_found"],
);

/** The URL rule: https, or http where ALLOW_HTTP_WEBHOOKS is true; absolute, without credentials. */
function webhookUrl(c: Context<AppEnv>, text: string): string {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new ApiError("invalid_body", { details: [{ path: "url", message: "must be an absolute URL" }] });
  }
  const allowed = url.protocol === "https:" || (url.protocol === "http:" && c.var.config.allowHttpWebhooks);
  if (!allowed || url.username || url.password) {
    const scheme = c.var.config.allowHttpWebhooks ? "https:// or http://" : "https://";
    throw new ApiError("invalid_body", {
      details: [{ path: "url", message: `must be a ${scheme} URL without credentials` }],
    });
  }
  return url.toString();
}

async function pathEndpoint(c: Context<AppEnv>, rawId: string): Promise<EndpointRow> {
  const id = parseUlid(rawId);
  const row = id ? await findEndpoint(c.env.DB, c.var.projectId, id) : null;
  if (!row) throw new ApiError("endpoint_not_found");
  return row;
}

export const webhookRoutes = createRouter()
  .openapi(create, async (c) => {
    const body = c.req.valid("json");
    const now = Date.now();
    const row: EndpointRow = {
      id: ulid(now),
      project_id: c.var.projectId,
      url: webhookUrl(c, body.url),
      event_types: JSON.stringify(body.eventTypes ?? ["video.deleted"]),
      enabled: 1,
      description: body.description ?? null,
      secret: newSecret(),
      created_at: isoTime(now),
    };
    await insertEndpoint(c.env.DB, row);
    return c.json({ ...toEndpoint(row), secret: row.secret }, 201);
  })
  .openapi(list, async (c) => c.json({ data: (await listEndpoints(c.env.DB, c.var.projectId)).map(toEndpoint) }, 200))
  .openapi(read, async (c) => c.json(toEndpoint(await pathEndpoint(c, c.req.valid("param").id)), 200))
  .openapi(remove, async (c) => {
    const endpoint = await pathEndpoint(c, c.req.valid("param").id);
    if (!(await deleteEndpoint(c.env.DB, c.var.projectId, endpoint.id))) throw new ApiError("endpoint_not_found");
    return c.body(null, 204);
  })
  .openapi(
    deliveries,
    async (c) => {
      const endpoint = await pathEndpoint(c, c.req.valid("param").id);
      const query = c.req.valid("query");
      const state = query.state;
      if (state !== undefined && !(DELIVERY_STATES as readonly string[]).includes(state))
        throw new ApiError("invalid_state");
      const { limit, after } = parsePage(query);
      const filter = { state: state as DeliveryState | undefined, eventType: query.eventType };
      const page = pageOf(await listDeliveries(c.env.DB, endpoint.id, filter, limit, after), limit);
      return c.json({ data: page.data.map(toDelivery), nextCursor: page.nextCursor }, 200);
    },
    validationHook({ query: { ...PAGE_QUERY_CODES, state: "invalid_state" } }),
  )
  .openapi(retry, async (c) => {
    const params = c.req.valid("param");
    const endpoint = await pathEndpoint(c, params.id);
    const attemptId = parseUlid(params.attemptId);
    const original = attemptId ? await findDelivery(c.env.DB, endpoint.id, attemptId) : null;
    if (!original) throw new ApiError("not_found", { message: "No such delivery attempt." });
    const created = await insertRetryAttempt(c.env.DB, original, ulid(), Date.now());
    if (!created) throw new Error("retry attempt was not written");
    await enqueue(c.env.WEBHOOK_QUEUE, [created.id]);
    return c.json(toDelivery(created), 202);
  });
