import type { Context } from "hono";
import type { TenantEnv } from "../auth/context";
import { videoReader } from "../auth/guards";
import { ApiError } from "../http/errors";
import { route } from "../http/route";
import { createRouter } from "../http/router";
import { jsonResponse } from "../http/schemas";
import { validationHook } from "../http/validation";
import { DAY, HOUR } from "../lib/time";
import { parseUlid } from "../lib/ulid";
import { pathVideo } from "../videos/present";
import { VideoParamsSchema } from "../videos/schemas";
import { hourOf, projectSubject } from "./fold";
import { readRollups } from "./queries";
import { analyticsOf, type Interval, topVideosOf } from "./report";
import { AnalyticsQuerySchema, ProjectAnalyticsSchema, VideoAnalyticsSchema } from "./schemas";

const DEFAULT_RANGE_MS = 7 * DAY;
const MAX_RANGE_MS = 90 * DAY;

const videoAnalytics = route(
  {
    method: "get",
    path: "/v1/videos/{id}/analytics",
    operationId: "getVideoAnalytics",
    tags: ["Analytics"],
    summary: "A video's viewing figures: views, watch time, startup time, rebuffering, errors, renditions",
    middleware: [videoReader] as const,
    request: { params: VideoParamsSchema, query: AnalyticsQuerySchema },
    responses: { 200: jsonResponse(VideoAnalyticsSchema, "The video's figures over the range") },
  },
  ["video_not_found", "invalid_query"],
);

const projectAnalytics = route(
  {
    method: "get",
    path: "/v1/analytics",
    operationId: "getProjectAnalytics",
    tags: ["Analytics"],
    summary: "The project's viewing figures (in the caller's mode), with its top videos by watch time",
    middleware: [videoReader] as const,
    request: { query: AnalyticsQuerySchema },
    responses: { 200: jsonResponse(ProjectAnalyticsSchema, "The project's figures over the range") },
  },
  ["invalid_query"],
);

type Range = { from: number; to: number; interval: Interval };

/** The range asked for: `to` default now, `from` default 7 days before, at most 90 days, from < to. */
function rangeOf(query: { from?: string | undefined; to?: string | undefined; interval?: Interval | undefined }) {
  const to = query.to === undefined ? Date.now() : Date.parse(query.to);
  const from = query.from === undefined ? to - DEFAULT_RANGE_MS : Date.parse(query.from);
  if (!(from < to)) {
    throw new ApiError("invalid_query", { details: [{ path: "from", message: "must be before to" }] });
  }
  if (to - from > MAX_RANGE_MS) {
    throw new ApiError("invalid_query", { details: [{ path: "to", message: "at most 90 days after from" }] });
  }
  return { from, to, interval: query.interval ?? "day" } satisfies Range;
}

/** The hours whose rollups a range reads: every hour it overlaps. */
function hoursOf(range: Range) {
  return { fromHour: hourOf(range.from), toHour: Math.ceil(range.to / HOUR) };
}

/** Where a project's figures are kept for the caller's mode: one subject per mode it sees. */
function projectSubjects<E extends TenantEnv>(c: Context<E>): string[] {
  const { projectId, mode } = c.var.tenant;
  return mode === "both"
    ? [projectSubject(projectId, true), projectSubject(projectId, false)]
    : [projectSubject(projectId, mode === "live")];
}

const QUERY_CODES = { query: { from: "invalid_query", to: "invalid_query", interval: "invalid_query" } } as const;

export const analyticsRoutes = createRouter()
  .openapi(
    videoAnalytics,
    async (c) => {
      const range = rangeOf(c.req.valid("query"));
      const { fromHour, toHour } = hoursOf(range);
      // The rollups are read beside the video's check: they are keyed by the id the path names.
      const id = parseUlid(c.req.valid("param").id);
      const [, rows] = await Promise.all([
        pathVideo(c, c.req.valid("param").id),
        readRollups(c.var.db, id ? [id] : [], fromHour, toHour),
      ]);
      return c.json(analyticsOf(rows, range), 200);
    },
    validationHook(QUERY_CODES),
  )
  .openapi(
    projectAnalytics,
    async (c) => {
      const range = rangeOf(c.req.valid("query"));
      const { fromHour, toHour } = hoursOf(range);
      const rows = await readRollups(c.var.db, projectSubjects(c), fromHour, toHour, c.var.tenant);
      return c.json({ ...analyticsOf(rows, range), topVideos: topVideosOf(rows.top) }, 200);
    },
    validationHook(QUERY_CODES),
  );
