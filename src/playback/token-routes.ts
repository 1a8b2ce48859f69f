import { z } from "@hono/zod-openapi";
import { videoReader } from "../auth/guards";
import { jsonBody } from "../http/body";
import { ApiError } from "../http/errors";
import { publicOrigin } from "../http/public-url";
import { route } from "../http/route";
import { createRouter } from "../http/router";
import { jsonRequest, jsonResponse, TimestampSchema } from "../http/schemas";
import { idempotent } from "../idempotency/middleware";
import { isoTime } from "../lib/time";
import { pathVideo } from "../videos/present";
import { AllowedOriginsSchema, ProjectQuerySchema, VideoParamsSchema } from "../videos/schemas";
import { playbackThumbnailUrl, playbackUrls } from "../videos/urls";
import { bindsRange } from "./span";
import { mintPlaybackToken } from "./tokens";

const TokenRequestSchema = z
  .strictObject({
    expiresIn: z
      .int()
      .min(60)
      .max(86_400)
      .optional()
      .openapi({ description: "Seconds until the token expires: 60 to 86400, default 3600", example: 3600 }),
    start: z
      .number()
      .min(0)
      .optional()
      .openapi({
        description:
          "A range bound in the token: its playlists list only the segments covering it, a frame " +
          "outside it is `403 invalid_playback_token`, caption files hold only the cues that meet it, and the " +
          "whole-video files (MP4, M4A, storyboard) are not served",
        example: 10,
      }),
    end: z
      .number()
      .positive()
      .optional()
      .openapi({ description: "The range's end, at most the duration", example: 20 }),
    allowedOrigins: AllowedOriginsSchema.optional().openapi({
      description: "The token's own allowed origins, beside the video's (both apply)",
    }),
  })
  .refine((body) => body.start === undefined || body.end === undefined || body.start < body.end, {
    message: "start must be before end",
    path: ["start"],
  })
  .openapi("PlaybackTokenRequest");

const TokenSchema = z
  .object({
    token: z.string().openapi({ description: "Stands in the path in place of the video id" }),
    expiresAt: TimestampSchema,
    hls: z.string().openapi({ format: "uri", description: "The HLS master playlist under the token" }),
    mp4: z
      .string()
      .nullable()
      .openapi({ format: "uri", description: "The MP4 under the token, when the video has one" }),
    m4a: z.string().nullable().openapi({
      format: "uri",
      description: "The audio only (M4A) under the token, when the video has one",
    }),
    thumbnail: z.string().openapi({
      format: "uri",
      description:
        "The video's current thumbnail under the token (its custom one, else the poster frame; under a ranged " +
        "token the range's own poster frame), with its own Content-Type and `Cache-Control: private`; " +
        "`404 not_found` while it has none",
    }),
  })
  .openapi("PlaybackToken");

const DEFAULT_EXPIRES_IN = 3600;

const mint = route(
  {
    method: "post",
    path: "/v1/videos/{id}/playback-tokens",
    operationId: "createPlaybackToken",
    tags: ["Playback"],
    summary: "Mint a short-lived playback token (plays any video, private ones included, until it expires)",
    description:
      "The URLs carry the token in place of the video id (`/play/<token>/master.m3u8`), so every relative URI " +
      "in the playlists works with it. An altered or expired token answers `403 invalid_playback_token`.",
    middleware: [videoReader, idempotent, jsonBody] as const,
    request: { params: VideoParamsSchema, query: ProjectQuerySchema, body: jsonRequest(TokenRequestSchema) },
    responses: { 201: jsonResponse(TokenSchema, "The token and its URLs") },
  },
  ["invalid_body", "video_not_found"],
);

export const playbackTokenRoutes = createRouter().openapi(mint, async (c) => {
  const { expiresIn = DEFAULT_EXPIRES_IN, start, end, allowedOrigins } = c.req.valid("json");
  const row = await pathVideo(c, c.req.valid("param").id);
  // A range is checked against the duration once the source has been probed.
  const pastEnd = (value: number | undefined) => value !== undefined && row.duration !== null && value > row.duration;
  if (pastEnd(end) || pastEnd(start) || (start !== undefined && row.duration !== null && start >= row.duration)) {
    throw new ApiError("invalid_body", { details: [{ path: "end", message: "the range must lie within the video" }] });
  }
  const expiresAt = Math.floor(Date.now() / 1000) + expiresIn;
  const token = await mintPlaybackToken(c.var.config.playbackSecret.current, row.id, expiresAt, {
    ...(allowedOrigins === undefined ? {} : { allowedOrigins }),
    ...(start === undefined ? {} : { start }),
    ...(end === undefined ? {} : { end }),
  });
  const origin = publicOrigin(c);
  // A token bound to a range plays the segments that cover it, and no whole file.
  const whole = !bindsRange({ start, end });
  const urls = playbackUrls(origin, token, { mp4: row.has_mp4 === 1 && whole, m4a: row.has_m4a === 1 && whole });
  const thumbnail = playbackThumbnailUrl(origin, token);
  return c.json({ token, expiresAt: isoTime(expiresAt * 1000), ...urls, thumbnail }, 201);
});
