import { videoReader, videoWriter } from "../auth/guards";
import { jsonBody, receiveJson } from "../http/body";
import { ApiError } from "../http/errors";
import { found } from "../http/found";
import { route } from "../http/route";
import { createRouter } from "../http/router";
import { jsonRequest, jsonResponse } from "../http/schemas";
import { rateLimit } from "../rate-limit/middleware";
import { findVideo } from "../videos/queries";
import { ProjectQuerySchema, VideoParamsSchema } from "../videos/schemas";
import { chaptersWithin, MAX_CHAPTERS, MAX_TITLE_LENGTH, pastTheEnd } from "./model";
import { deleteChapters, readChapters, saveChapters } from "./queries";
import { ChaptersRequestSchema, ChaptersSchema } from "./schemas";

const put = route(
  {
    method: "put",
    path: "/v1/videos/{id}/chapters",
    operationId: "putChapters",
    tags: ["Chapters"],
    summary: "Set a video's chapters, replacing any",
    description:
      `1 to ${MAX_CHAPTERS} chapters, each \`{"start", "title"}\`: \`start\` in seconds (whole milliseconds), the ` +
      "first at 0, each after the one before it, each below the video's duration once that is known; `title` 1 to " +
      `${MAX_TITLE_LENGTH} characters. A refused list changes nothing: \`400 invalid_body\`, with a \`details\` ` +
      "entry naming each chapter and field at fault (`chapters.3.start`). Any video but a deleted one takes " +
      "chapters, whatever its status; a chapter saved before the duration is known that turns out to start at or " +
      "past it is kept but not shown. Once the video plays, the chapters are at `/play/<x>/chapters.vtt` (a WebVTT " +
      "chapters track: a cue per chapter, to the next one's start, the last to the duration) and on the embed " +
      "page's timeline, at once.",
    middleware: [videoWriter, receiveJson, rateLimit("chapters"), jsonBody] as const,
    request: { params: VideoParamsSchema, query: ProjectQuerySchema, body: jsonRequest(ChaptersRequestSchema) },
    responses: { 200: jsonResponse(ChaptersSchema, "The chapters saved") },
  },
  ["invalid_body", "video_not_found"],
);

const get = route(
  {
    method: "get",
    path: "/v1/videos/{id}/chapters",
    operationId: "getChapters",
    tags: ["Chapters"],
    summary: "A video's chapters (an empty list when it has none)",
    middleware: [videoReader] as const,
    request: { params: VideoParamsSchema, query: ProjectQuerySchema },
    responses: { 200: jsonResponse(ChaptersSchema, "The chapters the video shows") },
  },
  ["video_not_found"],
);

const remove = route(
  {
    method: "delete",
    path: "/v1/videos/{id}/chapters",
    operationId: "deleteChapters",
    tags: ["Chapters"],
    summary: "Remove a video's chapters",
    description:
      "Done whether the video had chapters or not; `chapters.vtt` answers 404 and the embed page has none, at once.",
    middleware: [videoWriter] as const,
    request: { params: VideoParamsSchema, query: ProjectQuerySchema },
    responses: { 204: { description: "Removed" } },
  },
  ["video_not_found"],
);

export const chapterRoutes = createRouter()
  .openapi(put, async (c) => {
    const { chapters } = c.req.valid("json");
    const { db, tenant } = c.var;
    const saved = await found("video_not_found", c.req.valid("param").id, async (id) => {
      const saved = await saveChapters(db, tenant, id, chapters, Date.now());
      if (saved) return saved;
      // Nothing written: the video is gone, or a chapter starts at or past its duration.
      const video = await findVideo(db, tenant, id);
      if (!video) return null;
      throw new ApiError("invalid_body", { details: pastTheEnd(chapters, video.duration) });
    });
    return c.json({ chapters: saved.chapters }, 200);
  })
  .openapi(get, async (c) => {
    const { video, saved } = await found("video_not_found", c.req.valid("param").id, (id) =>
      readChapters(c.var.db, c.var.tenant, id),
    );
    return c.json({ chapters: saved ? chaptersWithin(saved.chapters, video.duration) : [] }, 200);
  })
  .openapi(remove, async (c) => {
    await found("video_not_found", c.req.valid("param").id, (id) => deleteChapters(c.var.db, c.var.tenant, id));
    return c.body(null, 204);
  });
