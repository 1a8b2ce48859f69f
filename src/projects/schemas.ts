import { z } from "@hono/zod-openapi";
import { PLANS } from "../auth/account";
import { TimestampSchema, textSchema, UlidSchema } from "../http/schemas";

export const ProjectCreateSchema = z
  .strictObject({
    name: textSchema().trim().min(1).max(100).openapi({ example: "Launch" }),
  })
  .openapi("ProjectCreateRequest");

export const ProjectSchema = z
  .object({
    id: UlidSchema,
    name: z.string().openapi({ example: "Launch" }),
    plan: z.enum(PLANS),
    createdAt: TimestampSchema,
  })
  .openapi("Project");
