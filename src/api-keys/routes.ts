import { z } from "@hono/zod-openapi";
import { ProjectPathParams, projectOwnerSession } from "../auth/guards";
import { jsonBody } from "../http/body";
import { found } from "../http/found";
import { route } from "../http/route";
import { createRouter } from "../http/router";
import { jsonRequest, jsonResponse, pathId } from "../http/schemas";
import { idempotent } from "../idempotency/middleware";
import { randomToken } from "../lib/crypto";
import { ulid } from "../lib/ulid";
import { QUOTAS, quotaExceeded } from "../rate-limit/policies";
import { insertApiKey, listApiKeys, revokeApiKey } from "./queries";
import { ApiKeyCreateSchema, ApiKeySchema, CreatedApiKeySchema, ScopeSchema } from "./schemas";

const create = route(
  {
    method: "post",
    path: "/v1/projects/{projectId}/api-keys",
    operationId: "createApiKey",
    tags: ["API keys"],
    summary: "Create an API key; the key is shown only in this response",
    middleware: [projectOwnerSession, idempotent, jsonBody] as const,
    request: { params: ProjectPathParams, body: jsonRequest(ApiKeyCreateSchema) },
    responses: {
      201: jsonResponse(CreatedApiKeySchema, "The key, with its secret"),
    },
  },
  ["quota_exceeded"],
);

const list = route({
  method: "get",
  path: "/v1/projects/{projectId}/api-keys",
  operationId: "listApiKeys",
  tags: ["API keys"],
  summary: "The project's unrevoked keys, without their secrets",
  middleware: [projectOwnerSession] as const,
  request: { params: ProjectPathParams },
  responses: {
    200: jsonResponse(z.object({ data: z.array(ApiKeySchema) }), "The keys"),
  },
});

const revoke = route(
  {
    method: "delete",
    path: "/v1/projects/{projectId}/api-keys/{keyId}",
    operationId: "revokeApiKey",
    tags: ["API keys"],
    summary: "Revoke a key; it is refused from then on",
    middleware: [projectOwnerSession] as const,
    request: { params: ProjectPathParams.extend({ keyId: pathId("key") }) },
    responses: {
      204: { description: "Revoked" },
    },
  },
  ["not_found"],
);

export const apiKeyRoutes = createRouter()
  .openapi(create, async (c) => {
    const { name, scopes, mode } = c.req.valid("json");
    const now = Date.now();
    const key = `svc_${mode}_${randomToken(32)}`;
    const created = await insertApiKey(
      c.var.db,
      {
        id: ulid(now),
        projectId: c.var.projectId,
        name,
        // One order, whatever order they were sent in.
        scopes: ScopeSchema.options.filter((scope) => scopes.includes(scope)),
        mode,
        key,
        now,
      },
      QUOTAS.api_keys.limit,
    );
    if (!created) throw quotaExceeded("api_keys");
    return c.json({ ...created, key }, 201);
  })
  .openapi(list, async (c) => c.json({ data: await listApiKeys(c.var.db, c.var.projectId) }, 200))
  .openapi(revoke, async (c) => {
    await found("not_found", c.req.valid("param").keyId, (keyId) =>
      revokeApiKey(c.var.db, c.var.projectId, keyId, Date.now()),
    );
    return c.body(null, 204);
  });
