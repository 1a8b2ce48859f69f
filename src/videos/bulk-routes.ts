import { z } from "@hono/zod-openapi";
import { videoWriter } from "../auth/guards";
import { jsonBody, receiveJson } from "../http/body";
import { ERRORS } from "../http/errors";
import { onlyMethods } from "../http/not-found";
import { route } from "../http/route";
import { createRouter } from "../http/router";
import { jsonRequest, jsonResponse } from "../http/schemas";
import { idempotent } from "../idempotency/middleware";
import type { Db } from "../lib/db";
import { logError } from "../lib/log";
import type { Tenant } from "../lib/tenant";
import { parseUlid } from "../lib/ulid";
import { rateLimit } from "../rate-limit/middleware";
import { deleteVideos, type ItemOutcome, stopAt, storeOf } from "./delete";
import type { ItemCode, Visibility } from "./model";
import { setVisibility } from "./queries";
import { BulkRequestSchema, BulkResultSchema, ProjectQuerySchema } from "./schemas";

const bulk = route({
  method: "post",
  path: "/v1/videos/bulk",
  operationId: "bulkVideos",
  tags: ["Videos"],
  summary: "Delete videos, or set their visibility, by id",
  description:
    "Answers 200 even when some items fail: inspect each entry's `ok`. One entry per distinct id " +
    "(case-insensitive), in order of first appearance. An infrastructure failure on a delete stops " +
    "processing: that entry reports internal_error and every later one not_attempted; retrying " +
    "the same request re-runs them and changes nothing already done.",
  middleware: [videoWriter, receiveJson, rateLimit("bulk"), idempotent, jsonBody] as const,
  request: { query: ProjectQuerySchema, body: jsonRequest(BulkRequestSchema) },
  responses: {
    200: jsonResponse(z.object({ results: z.array(BulkResultSchema) }), "One result per distinct id"),
  },
});

/** Canonical ids, each once, in order of first appearance. */
export function distinctIds(ids: string[]): string[] {
  return [...new Set(ids.map((id) => parseUlid(id) as string))];
}

const ITEM_MESSAGES: Record<ItemCode, string> = {
  video_not_found: ERRORS.video_not_found.message,
  upload_completion_in_progress: ERRORS.upload_completion_in_progress.message,
  internal_error: ERRORS.internal_error.message,
  not_attempted: "Not attempted: processing stopped at an earlier item. Retry the request.",
};

async function applyVisibility(db: Db, tenant: Tenant, ids: string[], visibility: Visibility) {
  try {
    const changed = await setVisibility(db, tenant, ids, visibility, Date.now());
    return ids.map(
      (id): ItemOutcome => (changed.has(id) ? { id, ok: true } : { id, ok: false, code: "video_not_found" }),
    );
  } catch (error) {
    logError("bulk set_visibility", error, { projectId: tenant.projectId });
    // One atomic statement: nothing changed, so processing stopped at the first id.
    return stopAt(ids, 0);
  }
}

export const bulkRoutes = createRouter()
  .openapi(bulk, async (c) => {
    const body = c.req.valid("json");
    const ids = distinctIds(body.videoIds);
    const outcomes =
      body.action === "delete"
        ? await deleteVideos(storeOf(c), c.var.tenant, ids)
        : await applyVisibility(c.var.db, c.var.tenant, ids, body.visibility);
    const results = outcomes.map((outcome) =>
      outcome.ok
        ? { id: outcome.id, ok: true as const }
        : { id: outcome.id, ok: false as const, error: { code: outcome.code, message: ITEM_MESSAGES[outcome.code] } },
    );
    // An answer a retry should run again (it stopped at an infrastructure failure) is not replayed.
    const stopped = outcomes.some((o) => !o.ok && (o.code === "internal_error" || o.code === "not_attempted"));
    if (stopped) c.set("idempotencyKeyUnused", true);
    return c.json({ results }, 200);
  })
  // `/v1/videos/{id}` would take "bulk" for an id under its methods (GET, PATCH, DELETE).
  .all(bulk.path, onlyMethods([bulk.method]));
