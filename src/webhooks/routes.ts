import { z } from "@hono/zod-openapi";
import type { Context } from "hono";
import type { TenantEnv } from "../auth/context";
import { ModeQuerySchema, ProjectPathParams, projectMember } from "../auth/guards";
import { jsonBody } from "../http/body";
import { ApiError } from "../http/errors";
import { found } from "../http/found";
import { PAGE_QUERY_CODES, pageOf, parsePage } from "../http/pagination";
import { route } from "../http/route";
import { createRouter } from "../http/router";
import { jsonRequest, jsonResponse, pathId } from "../http/schemas";
import { validationHook } from "../http/validation";
import { idempotent } from "../idempotency/middleware";
import { targetProblem } from "../lib/safe-targets";
import { creationMode, livemodeOf } from "../lib/tenant";
import { isoTime } from "../lib/time";
import { parseUlid, ulid } from "../lib/ulid";
import { rateLimit } from "../rate-limit/middleware";
import { QUOTAS, quotaExceeded } from "../rate-limit/policies";
import { insertRetryAttempt } from "./attempt-queries";
import { enqueue } from "./delivery-queue";
import {
  deleteEndpoint,
  findEndpoint,
  insertEndpoint,
  listEndpoints,
  rotateSecret,
  updateEndpoint,
} from "./endpoint-queries";
import { endpointDeliveries, findDelivery } from "./listing-queries";
import {
  deliveriesCursorScope,
  type EndpointRow,
  EVERY_TYPE,
  SECRET_OVERLAP_MS,
  toDelivery,
  toEndpoint,
} from "./model";
import {
  CreatedEndpointSchema,
  DeliveriesQuerySchema,
  DeliverySchema,
  EndpointCreateSchema,
  EndpointPatchSchema,
  EndpointSchema,
} from "./schemas";
import { newSecret } from "./signing";

const EndpointParams = ProjectPathParams.extend({ id: pathId("webhook endpoint") });

const create = route(
  {
    method: "post",
    path: "/v1/projects/{projectId}/webhook-endpoints",
    operationId: "createWebhookEndpoint",
    tags: ["Webhooks"],
    summary: "Add a webhook endpoint; its signing secret is shown only in this response",
    middleware: [projectMember("write", "not_found"), idempotent, jsonBody] as const,
    request: { params: ProjectPathParams, query: ModeQuerySchema, body: jsonRequest(EndpointCreateSchema) },
    responses: { 201: jsonResponse(CreatedEndpointSchema, "The endpoint, with its secret") },
  },
  ["invalid_body", "quota_exceeded"],
);

const patch = route(
  {
    method: "patch",
    path: "/v1/projects/{projectId}/webhook-endpoints/{id}",
    operationId: "updateWebhookEndpoint",
    tags: ["Webhooks"],
    summary: "Change an endpoint's URL, event types, description, or whether it is enabled",
    middleware: [projectMember("write", "endpoint_not_found"), jsonBody] as const,
    request: { params: EndpointParams, query: ModeQuerySchema, body: jsonRequest(EndpointPatchSchema) },
    responses: { 200: jsonResponse(EndpointSchema, "The endpoint after the change") },
  },
  ["endpoint_not_found", "invalid_body"],
);

const rotate = route(
  {
    method: "post",
    path: "/v1/projects/{projectId}/webhook-endpoints/{id}/rotate-secret",
    operationId: "rotateWebhookSecret",
    tags: ["Webhooks"],
    summary: "Replace the signing secret; for 24 h deliveries carry the new and the old signature",
    middleware: [projectMember("write", "endpoint_not_found"), idempotent] as const,
    request: { params: EndpointParams, query: ModeQuerySchema },
    responses: {
      200: jsonResponse(
        z.object({ secret: z.string().openapi({ description: "whsec_…: shown only in this response" }) }),
        "The new secret",
      ),
    },
  },
  ["endpoint_not_found"],
);

const list = route({
  method: "get",
  path: "/v1/projects/{projectId}/webhook-endpoints",
  operationId: "listWebhookEndpoints",
  tags: ["Webhooks"],
  summary: "The project's webhook endpoints",
  middleware: [projectMember("read", "not_found")] as const,
  request: { params: ProjectPathParams, query: ModeQuerySchema },
  responses: { 200: jsonResponse(z.object({ data: z.array(EndpointSchema) }), "The endpoints") },
});

const read = route(
  {
    method: "get",
    path: "/v1/projects/{projectId}/webhook-endpoints/{id}",
    operationId: "getWebhookEndpoint",
    tags: ["Webhooks"],
    summary: "One webhook endpoint",
    middleware: [projectMember("read", "endpoint_not_found")] as const,
    request: { params: EndpointParams, query: ModeQuerySchema },
    responses: { 200: jsonResponse(EndpointSchema, "The endpoint") },
  },
  ["endpoint_not_found"],
);

const remove = route(
  {
    method: "delete",
    path: "/v1/projects/{projectId}/webhook-endpoints/{id}",
    operationId: "deleteWebhookEndpoint",
    tags: ["Webhooks"],
    summary: "Delete a webhook endpoint and its delivery attempts",
    middleware: [projectMember("write", "endpoint_not_found")] as const,
    request: { params: EndpointParams, query: ModeQuerySchema },
    responses: { 204: { description: "Deleted" } },
  },
  ["endpoint_not_found"],
);

const deliveries = route(
  {
    method: "get",
    path: "/v1/projects/{projectId}/webhook-endpoints/{id}/deliveries",
    operationId: "listWebhookDeliveries",
    tags: ["Webhooks"],
    summary: "The endpoint's delivery attempts, newest first (createdAt, then id)",
    middleware: [projectMember("read", "endpoint_not_found"), rateLimit("deliveries")] as const,
    request: { params: EndpointParams, query: DeliveriesQuerySchema.extend(ModeQuerySchema.shape) },
    responses: {
      200: jsonResponse(z.object({ data: z.array(DeliverySchema), nextCursor: z.string().nullable() }), "One page"),
    },
  },
  // invalid_body: a malformed eventType (sent twice, say), which has no code of its own.
  ["endpoint_not_found", "invalid_limit", "invalid_cursor", "invalid_state", "invalid_body"],
);

const retry = route(
  {
    method: "post",
    path: "/v1/projects/{projectId}/webhook-endpoints/{id}/deliveries/{attemptId}/retry",
    operationId: "retryWebhookDelivery",
    tags: ["Webhooks"],
    summary: "Send the attempt's event to the endpoint again, as a new attempt",
    middleware: [projectMember("write", "endpoint_not_found"), rateLimit("delivery_retry"), idempotent] as const,
    request: { params: EndpointParams.extend({ attemptId: pathId("delivery attempt") }), query: ModeQuerySchema },
    responses: { 202: jsonResponse(DeliverySchema, "The new attempt, pending") },
  },
  ["endpoint_not_found", "not_found", "endpoint_disabled"],
);

/** A webhook URL the service may deliver to (docs/webhooks.md), normalized; else invalid_body on `url`. */
function webhookUrl<E extends TenantEnv>(c: Context<E>, text: string): string {
  const problem = targetProblem(text, { allowHttp: c.var.config.allowHttpWebhooks });
  if (problem) throw new ApiError("invalid_body", { details: [{ path: "url", message: problem }] });
  return new URL(text).toString();
}

/** The tenant's endpoint the path names; another project's or another mode's is endpoint_not_found. */
async function pathEndpoint<E extends TenantEnv>(c: Context<E>, rawId: string): Promise<EndpointRow> {
  return found("endpoint_not_found", rawId, (id) => findEndpoint(c.var.db, c.var.tenant, id));
}

export const webhookRoutes = createRouter()
  .openapi(create, async (c) => {
    const body = c.req.valid("json");
    const now = Date.now();
    const row: EndpointRow = {
      id: ulid(now),
      project_id: c.var.tenant.projectId,
      livemode: livemodeOf(creationMode(c.var.tenant)),
      url: webhookUrl(c, body.url),
      event_types: body.eventTypes ? JSON.stringify(body.eventTypes) : EVERY_TYPE,
      enabled: 1,
      disabled_reason: null,
      description: body.description ?? null,
      secret: newSecret(),
      previous_secret: null,
      previous_secret_until: null,
      created_at: isoTime(now),
    };
    if (!(await insertEndpoint(c.var.db, row, QUOTAS.webhook_endpoints.limit)))
      throw quotaExceeded("webhook_endpoints");
    return c.json({ ...toEndpoint(row), secret: row.secret }, 201);
  })
  .openapi(list, async (c) => c.json({ data: (await listEndpoints(c.var.db, c.var.tenant)).map(toEndpoint) }, 200))
  .openapi(read, async (c) => c.json(toEndpoint(await pathEndpoint(c, c.req.valid("param").id)), 200))
  .openapi(patch, async (c) => {
    const body = c.req.valid("json");
    const url = body.url === undefined ? undefined : webhookUrl(c, body.url);
    const row = await found("endpoint_not_found", c.req.valid("param").id, (id) =>
      updateEndpoint(c.var.db, c.var.tenant, id, { ...body, url }),
    );
    return c.json(toEndpoint(row), 200);
  })
  .openapi(rotate, async (c) => {
    const secret = newSecret();
    const overlapUntil = isoTime(Date.now() + SECRET_OVERLAP_MS);
    await found("endpoint_not_found", c.req.valid("param").id, (id) =>
      rotateSecret(c.var.db, c.var.tenant, id, secret, overlapUntil),
    );
    return c.json({ secret }, 200);
  })
  .openapi(remove, async (c) => {
    await found("endpoint_not_found", c.req.valid("param").id, (id) => deleteEndpoint(c.var.db, c.var.tenant, id));
    return c.body(null, 204);
  })
  .openapi(
    deliveries,
    async (c) => {
      const endpointId = parseUlid(c.req.valid("param").id);
      if (!endpointId) throw new ApiError("endpoint_not_found");
      const { state, eventType, ...page } = c.req.valid("query");
      const filter = { state, eventType };
      // A cursor is valid only for the listing it came from: this endpoint, this filter.
      const cursors = { secret: c.var.config.cursorSecret, scope: deliveriesCursorScope(endpointId, filter) };
      const { limit, after } = await parsePage(page, cursors);
      const { endpoint, rows } = await endpointDeliveries(c.var.db, c.var.tenant, endpointId, filter, limit, after);
      if (!endpoint) throw new ApiError("endpoint_not_found");
      const { data, nextCursor } = await pageOf(rows, limit, cursors);
      return c.json({ data: data.map(toDelivery), nextCursor }, 200);
    },
    validationHook({ query: { ...PAGE_QUERY_CODES, state: "invalid_state" } }),
  )
  .openapi(retry, async (c) => {
    const params = c.req.valid("param");
    const endpoint = await pathEndpoint(c, params.id);
    if (endpoint.enabled !== 1) throw new ApiError("endpoint_disabled");
    const original = await found("not_found", params.attemptId, (id) => findDelivery(c.var.db, endpoint.id, id));
    const created = await insertRetryAttempt(c.var.db, original, ulid(), Date.now());
    if (!created) throw new Error("retry attempt was not written");
    await enqueue(c.env.WEBHOOK_QUEUE, [
      { deliveryId: created.id, endpointId: endpoint.id, projectId: endpoint.project_id },
    ]);
    return c.json(toDelivery(created), 202);
  });
