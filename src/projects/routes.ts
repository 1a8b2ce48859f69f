import { z } from "@hono/zod-openapi";
import { authenticate, sessionOf } from "../auth/middleware";
import { jsonBody, receiveJson } from "../http/body";
import { found } from "../http/found";
import { route } from "../http/route";
import { createRouter } from "../http/router";
import { jsonRequest, jsonResponse, pathId, TimestampSchema, textSchema, UlidSchema } from "../http/schemas";
import { validationHook } from "../http/validation";
import { isoTime } from "../lib/time";
import { ulid } from "../lib/ulid";
import { rateLimit } from "../rate-limit/middleware";
import { findOwnedProject, insertProject, listProjects } from "./queries";

export const ProjectCreateSchema = z
  .strictObject({
    name: textSchema().trim().min(1).max(100),
  })
  .openapi("ProjectCreateRequest");

export const ProjectSchema = z
  .object({
    id: UlidSchema,
    name: z.string(),
    plan: z.enum(["trial", "free", "pro", "business"]),
    createdAt: TimestampSchema,
  })
  .openapi("Project");

const sessionOnly = authenticate({ accept: "session" });

const create = route(
  {
    method: "post",
    path: "/v1/projects",
    operationId: "createProject",
    tags: ["Projects"],
    summary: "Create a project on the account's current plan",
    middleware: [sessionOnly, receiveJson, rateLimit("project_create"), jsonBody] as const,
    request: { body: jsonRequest(ProjectCreateSchema) },
    responses: {
      201: jsonResponse(ProjectSchema, "The new project"),
    },
  },
  ["invalid_name"],
);

const list = route({
  method: "get",
  path: "/v1/projects",
  operationId: "listProjects",
  tags: ["Projects"],
  summary: "The account's projects, newest first",
  middleware: [sessionOnly] as const,
  responses: {
    200: jsonResponse(z.object({ data: z.array(ProjectSchema) }), "The projects"),
  },
});

const read = route(
  {
    method: "get",
    path: "/v1/projects/{id}",
    operationId: "getProject",
    tags: ["Projects"],
    summary: "One project",
    middleware: [sessionOnly] as const,
    request: { params: z.object({ id: pathId("project") }) },
    responses: {
      200: jsonResponse(ProjectSchema, "The project"),
    },
  },
  ["not_found"],
);

export const projectRoutes = createRouter()
  .openapi(
    create,
    async (c) => {
      const { accountId, plan } = sessionOf(c);
      const now = Date.now();
      const project = await insertProject(c.var.db, {
        id: ulid(now),
        accountId,
        name: c.req.valid("json").name,
        plan,
        createdAt: isoTime(now),
      });
      return c.json(project, 201);
    },
    validationHook({ json: "invalid_name" }),
  )
  .openapi(list, async (c) => c.json({ data: await listProjects(c.var.db, sessionOf(c).accountId) }, 200))
  .openapi(read, async (c) => {
    const project = await found("not_found", c.req.valid("param").id, (id) =>
      findOwnedProject(c.var.db, sessionOf(c).accountId, id),
    );
    return c.json(project, 200);
  });
