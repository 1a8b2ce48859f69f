import { z } from "@hono/zod-openapi";
import { SCOPES } from "../auth/context";
import { TimestampSchema, textSchema, UlidSchema } from "../http/schemas";
import { MODES } from "../lib/tenant";

export const ScopeSchema = z.enum(SCOPES);

export const ApiKeyCreateSchema = z
  .strictObject({
    name: textSchema().trim().min(1).max(100).openapi({ example: "server" }),
    scopes: z
      .array(ScopeSchema)
      .min(1)
      .max(2)
      .refine((scopes) => new Set(scopes).size === scopes.length, "scopes must not repeat"),
    mode: z.enum(MODES),
  })
  .openapi("ApiKeyCreateRequest");

export const ApiKeySchema = z
  .object({
    id: UlidSchema,
    name: z.string().openapi({ example: "server" }),
    scopes: z.array(ScopeSchema),
    mode: z.enum(MODES),
    createdAt: TimestampSchema,
    lastUsedAt: TimestampSchema.nullable(),
  })
  .openapi("ApiKey");

export const CreatedApiKeySchema = ApiKeySchema.extend({
  key: z.string().openapi({ description: "The secret; shown only in this response", example: "svc_test_…" }),
}).openapi("CreatedApiKey");
