import { z } from "@hono/zod-openapi";
import { approvedSession, ProjectPathParams } from "../auth/guards";
import { sessionOf } from "../auth/middleware";
import { jsonBody, receiveJson } from "../http/body";
import { found } from "../http/found";
import { route } from "../http/route";
import { createRouter } from "../http/router";
import { jsonRequest, jsonResponse } from "../http/schemas";
import { validationHook } from "../http/validation";
import { idempotent } from "../idempotency/middleware";
import { logError } from "../lib/log";
import { isoTime } from "../lib/time";
import { ulid } from "../lib/ulid";
import { rateLimit } from "../rate-limit/middleware";
import { sendProjectDeletion } from "./deletions";
import { findOwnedProject, insertProject, listProjects, markProjectDeleted } from "./queries";
import { ProjectCreateSchema, ProjectSchema } from "./schemas";

const create = route(
  {
    method: "post",
    path: "/v1/projects",
    operationId: "createProject",
    tags: ["Projects"],
    summary: "Create a project on the account's current plan",
    middleware: [approvedSession, receiveJson, rateLimit("project_create"), idempotent, jsonBody] as const,
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
  middleware: [approvedSession] as const,
  responses: {
    200: jsonResponse(z.object({ data: z.array(ProjectSchema) }), "The projects"),
  },
});

const read = route(
  {
    method: "get",
    path: "/v1/projects/{projectId}",
    operationId: "getProject",
    tags: ["Projects"],
    summary: "One project",
    middleware: [approvedSession] as const,
    request: { params: ProjectPathParams },
    responses: {
      200: jsonResponse(ProjectSchema, "The project"),
    },
  },
  ["not_found"],
);

const remove = route(
  {
    method: "delete",
    path: "/v1/projects/{projectId}",
    operationId: "deleteProject",
    tags: ["Projects"],
    summary: "Delete a project with everything it holds",
    description:
      "From the answer on, the project answers 404, its API keys 401, and its videos, thumbnail URLs " +
      "and uploads 404; its webhook endpoints get no further delivery (no `video.deleted` is sent for " +
      "its videos). What it stored (rows, media, open uploads) is removed in the background.",
    middleware: [approvedSession] as const,
    request: { params: ProjectPathParams },
    responses: {
      204: { description: "Deleted" },
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
    const project = await found("not_found", c.req.valid("param").projectId, (id) =>
      findOwnedProject(c.var.db, sessionOf(c).accountId, id),
    );
    return c.json(project, 200);
  })
  .openapi(remove, async (c) => {
    const { accountId } = sessionOf(c);
    const projectId = await found("not_found", c.req.valid("param").projectId, async (id) =>
      (await markProjectDeleted(c.var.db, accountId, id, Date.now())) ? id : null,
    );
    try {
      await sendProjectDeletion(c.env.PROJECT_DELETION_QUEUE, { projectId });
    } catch (error) {
      // The deletion is recorded in D1 already: the scheduled sweep purges the project.
      logError("project delete: send purge", error, { projectId });
    }
    return c.body(null, 204);
  });
