import { z } from "@hono/zod-openapi";
import { TimestampSchema } from "../http/schemas";
import { ProjectQuerySchema } from "../videos/schemas";

const instant = (what: string) =>
  z.iso
    .datetime({ offset: true })
    .optional()
    .openapi({ description: what, example: "2026-11-22T06:00:00.000Z", format: "date-time" });

export const AnalyticsQuerySchema = ProjectQuerySchema.extend({
  from: instant("Start of the range (ISO 8601); default `to` less 7 days. Counted by whole hours (UTC)."),
  to: instant("End of the range (ISO 8601, excluded); default now. At most 90 days after `from`."),
  interval: z
    .enum(["hour", "day"])
    .optional()
    .openapi({ description: "The series' step: `hour` or `day` (UTC days); default `day`" }),
});

const AnalyticsFields = {
  views: z.int().openapi({ description: "Views started in the range (a view counts once, in its first hour)" }),
  watchTimeSeconds: z.number().openapi({ description: "Time spent playing, all views together" }),
  startupTimeMs: z
    .object({ p50: z.number(), p95: z.number() })
    .nullable()
    .openapi({
      description:
        "Play intent to the first moving frame: median and 95th percentile, read from a histogram (interpolated " +
        "within its bucket); null without any startup reported",
    }),
  rebufferRatio: z.number().openapi({ description: "Rebuffering time over watch time (0 without watch time)" }),
  errorViews: z.int().openapi({ description: "Views that reported a playback error" }),
  renditions: z
    .array(z.object({ resolution: z.string(), share: z.number().openapi({ description: "0 to 1" }) }))
    .openapi({ description: "Each rendition's share of the watch time, largest first" }),
  series: z
    .array(z.object({ start: TimestampSchema, views: z.int(), watchTimeSeconds: z.number() }))
    .openapi({ description: "One point per interval from the one holding `from` up to `to`, empty ones included" }),
};

export const VideoAnalyticsSchema = z.object(AnalyticsFields).openapi("VideoAnalytics");

export const ProjectAnalyticsSchema = z
  .object({
    ...AnalyticsFields,
    topVideos: z
      .array(
        z.object({ videoId: z.string(), title: z.string().nullable(), views: z.int(), watchTimeSeconds: z.number() }),
      )
      .openapi({ description: "At most 10 of the project's videos, by watch time in the range" }),
  })
  .openapi("ProjectAnalytics");
