import { z } from "@hono/zod-openapi";
import { videoReader, videoWriter } from "../auth/guards";
import { jsonBody } from "../http/body";
import { ApiError } from "../http/errors";
import { PAGE_QUERY_CODES, PageQuerySchema, pageOf, parsePage } from "../http/pagination";
import { wellFormedQuery } from "../http/query";
import { route } from "../http/route";
import { createRouter } from "../http/router";
import { jsonRequest, jsonResponse } from "../http/schemas";
import { validationHook } from "../http/validation";
import { idempotent } from "../idempotency/middleware";
import { parseUlid } from "../lib/ulid";
import { hearing } from "../speech/engine";
import { heardAs } from "../speech/languages";
import { createClip } from "./clips";
import { createVideoWithUpload } from "./create";
import { deleteVideos, storeOf } from "./delete";
import { createImportedVideo, importUrl } from "./import-start";
import { UPLOAD_SESSION_MS } from "./model";
import { pathVideo, present } from "./present";
import { findVideo, listVideos, updateVideo } from "./queries";
import {
  MAX_METADATA_PAIRS,
  ProjectQuerySchema,
  UploadSessionSchema,
  VideoCreateSchema,
  VideoFilterSchema,
  VideoParamsSchema,
  VideoPatchSchema,
  VideoSchema,
} from "./schemas";
import { filterScope, metadataFilters, searchQuery, type VideoFilter } from "./search";

const create = route(
  {
    method: "post",
    path: "/v1/videos",
    operationId: "createVideo",
    tags: ["Videos"],
    summary:
      "Create a video: with its upload session (an R2 multipart upload), imported from `sourceUrl`, or as a clip of another video (`clipOf`)",
    middleware: [videoWriter, idempotent, jsonBody] as const,
    request: { query: ProjectQuerySchema, body: jsonRequest(VideoCreateSchema) },
    responses: {
      201: jsonResponse(
        z.object({
          video: VideoSchema,
          upload: UploadSessionSchema.optional().openapi({
            description:
              "The upload session; absent for an import (`sourceUrl`, the video `importing`) and for a clip (`clipOf`, `uploaded` at once)",
          }),
        }),
        "The video, and its upload session when it takes an upload",
      ),
    },
  },
  ["video_not_found", "video_not_ready", "language_not_supported", "transcription_unavailable"],
);

const list = route(
  {
    method: "get",
    path: "/v1/videos",
    operationId: "listVideos",
    tags: ["Videos"],
    summary: "The project's videos, newest first",
    middleware: [videoReader, wellFormedQuery] as const,
    request: { query: ProjectQuerySchema.extend(PageQuerySchema.shape).extend(VideoFilterSchema.shape) },
    responses: {
      200: jsonResponse(z.object({ data: z.array(VideoSchema), nextCursor: z.string().nullable() }), "One page"),
    },
  },
  ["invalid_limit", "invalid_cursor", "invalid_query"],
);

const read = route(
  {
    method: "get",
    path: "/v1/videos/{id}",
    operationId: "getVideo",
    tags: ["Videos"],
    summary: "One video",
    middleware: [videoReader] as const,
    request: { params: VideoParamsSchema, query: ProjectQuerySchema },
    responses: {
      200: jsonResponse(VideoSchema, "The video"),
    },
  },
  ["video_not_found"],
);

const edit = route(
  {
    method: "patch",
    path: "/v1/videos/{id}",
    operationId: "updateVideo",
    tags: ["Videos"],
    summary: "Edit a video's title or visibility; making it private takes effect on playback at once",
    middleware: [videoWriter, jsonBody] as const,
    request: { params: VideoParamsSchema, query: ProjectQuerySchema, body: jsonRequest(VideoPatchSchema) },
    responses: {
      200: jsonResponse(VideoSchema, "The video as edited"),
    },
  },
  ["video_not_found", "invalid_body"],
);

const remove = route(
  {
    method: "delete",
    path: "/v1/videos/{id}",
    operationId: "deleteVideo",
    tags: ["Videos"],
    summary: "Soft-delete a video: aborts its upload session and emits video.deleted",
    middleware: [videoWriter] as const,
    request: { params: VideoParamsSchema, query: ProjectQuerySchema },
    responses: {
      204: { description: "Deleted" },
    },
  },
  ["video_not_found", "upload_completion_in_progress"],
);

/**
 * Caption languages a creation asks to be generated must be heard by the engine there is: `503
 * transcription_unavailable` without one, `400 language_not_supported` for a language it does not
 * hear (the same refusals as asking for one track).
 */
async function checkHeard(env: Env, languages: string[]): Promise<void> {
  const engine = await hearing(env);
  if ("unavailable" in engine) throw new ApiError("transcription_unavailable", { message: engine.unavailable });
  const unheard = languages.filter((language) => !heardAs(language, engine.languages));
  if (unheard.length > 0) {
    throw new ApiError("language_not_supported", {
      message: `Captions cannot be generated in ${unheard.join(", ")}: the speech engine hears ${engine.languages.join(", ")}.`,
      details: unheard.map((language) => ({
        path: `generatedCaptions.${languages.indexOf(language)}`,
        message: "a language the speech engine does not hear",
      })),
    });
  }
}

export const videoRoutes = createRouter()
  .openapi(create, async (c) => {
    const body = c.req.valid("json");
    const now = Date.now();
    if (body.generatedCaptions?.length) await checkHeard(c.env, body.generatedCaptions);
    const given = {
      title: body.title ?? null,
      tags: body.tags,
      metadata: body.metadata,
      allowedOrigins: body.allowedOrigins,
      generatedCaptions: body.generatedCaptions,
    };
    if (body.clipOf) {
      const deps = { db: c.var.db, encodeQueue: c.env.ENCODE_QUEUE };
      // Without a visibility, a clip takes its video's (createClip).
      const clip = await createClip(deps, c.var.tenant, body.clipOf, { ...given, visibility: body.visibility }, now);
      return c.json({ video: present(c, clip, now) }, 201);
    }
    const choices = { ...given, visibility: body.visibility ?? "public" };
    if (body.sourceUrl !== undefined) {
      const url = importUrl(body.sourceUrl, { allowHttp: c.var.config.allowHttpWebhooks });
      const row = await createImportedVideo(c.var.db, c.env.IMPORT_QUEUE, c.var.tenant, { ...choices, url }, now);
      return c.json({ video: present(c, row, now) }, 201);
    }
    const row = await createVideoWithUpload(
      c.env.MEDIA,
      c.var.db,
      c.var.tenant,
      { ...choices, expiresAt: now + UPLOAD_SESSION_MS, tus: false },
      now,
    );
    return c.json(
      {
        video: present(c, row, now),
        upload: { id: row.upload_id as string, expiresAt: row.upload_expires_at as string },
      },
      201,
    );
  })
  .openapi(
    list,
    async (c) => {
      const {
        status,
        visibility,
        tag,
        search,
        createdAfter,
        createdBefore,
        metadata: _declared,
        ...query
      } = c.req.valid("query");
      const { tenant } = c.var;
      const filter: VideoFilter = {
        status,
        visibility,
        tags: tag === undefined ? [] : [tag].flat(),
        metadata: metadataFilters(new URL(c.req.url).searchParams),
        search: search === undefined ? undefined : searchQuery(search),
        createdAfter,
        createdBefore,
      };
      // A cursor is valid only for the listing it came from: this project and mode, this filter.
      const scope = JSON.stringify(["videos", tenant.projectId, tenant.mode, ...filterScope(filter)]);
      const cursors = { secret: c.var.config.cursorSecret, scope };
      const { limit, after } = await parsePage(query, cursors);
      const now = Date.now();
      const rows = await listVideos(c.var.db, tenant, filter, limit, after, now);
      const page = await pageOf(rows, limit, cursors);
      return c.json({ data: page.data.map((row) => present(c, row, now)), nextCursor: page.nextCursor }, 200);
    },
    validationHook({
      query: {
        ...PAGE_QUERY_CODES,
        status: "invalid_query",
        visibility: "invalid_query",
        tag: "invalid_query",
        search: "invalid_query",
        metadata: "invalid_query",
        createdAfter: "invalid_query",
        createdBefore: "invalid_query",
      },
    }),
  )
  .openapi(read, async (c) => c.json(present(c, await pathVideo(c, c.req.valid("param").id)), 200))
  .openapi(edit, async (c) => {
    const id = parseUlid(c.req.valid("param").id);
    const patch = c.req.valid("json");
    const row = id ? await updateVideo(c.var.db, c.var.tenant, id, patch, Date.now(), MAX_METADATA_PAIRS) : null;
    if (!row) {
      // The update leaves the video alone when the merged metadata would hold too many pairs.
      if (id && patch.metadata && (await findVideo(c.var.db, c.var.tenant, id))) {
        throw new ApiError("invalid_body", {
          details: [{ path: "metadata", message: `at most ${MAX_METADATA_PAIRS} pairs once merged` }],
        });
      }
      throw new ApiError("video_not_found");
    }
    return c.json(present(c, row), 200);
  })
  .openapi(remove, async (c) => {
    const id = parseUlid(c.req.valid("param").id);
    if (!id) throw new ApiError("video_not_found");
    const [outcome] = await deleteVideos(storeOf(c), c.var.tenant, [id]);
    if (!outcome) throw new Error("deleteVideos gave no outcome for the id");
    // A lone id is never "not attempted": a failure stops at it, as internal_error.
    if (!outcome.ok) throw new ApiError(outcome.code === "not_attempted" ? "internal_error" : outcome.code);
    return c.body(null, 204);
  });
