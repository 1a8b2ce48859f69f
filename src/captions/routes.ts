import { videoReader, videoWriter } from "../auth/guards";
import { optionalJsonBody, receiveBody } from "../http/body";
import { ApiError } from "../http/errors";
import { found } from "../http/found";
import { publicOrigin } from "../http/public-url";
import { wellFormedQuery } from "../http/query";
import { route } from "../http/route";
import { createRouter } from "../http/router";
import { binaryBody, jsonResponse } from "../http/schemas";
import { validationHook } from "../http/validation";
import { idempotent } from "../idempotency/middleware";
import { canonicalLanguage, englishName } from "../lib/language";
import { logError } from "../lib/log";
import { replaceObject } from "../lib/replace-object";
import { captionsKey } from "../lib/storage-keys";
import { parseUlid, ulid } from "../lib/ulid";
import { rateLimit } from "../rate-limit/middleware";
import { findVideo } from "../videos/queries";
import { ProjectQuerySchema } from "../videos/schemas";
import { askForTrack } from "./generation";
import { toTrack } from "./model";
import { deleteTrack, listTracks, MAX_TRACKS, swapTrack } from "./queries";
import {
  CaptionParamsSchema,
  CaptionQuerySchema,
  GenerateRequestSchema,
  TrackListSchema,
  TrackSchema,
} from "./schemas";
import { CAPTION_TYPES, CAPTIONS_BODY, readCaptionsUpload } from "./upload";

const CaptionsParamsSchema = CaptionParamsSchema.pick({ id: true });

const put = route(
  {
    method: "put",
    path: "/v1/videos/{id}/captions/{language}",
    operationId: "putCaptionTrack",
    tags: ["Captions"],
    summary: "Add or replace the caption track of a language, from WebVTT or SubRip (at most 2 MiB)",
    description:
      "The body is the file itself, in UTF-8: WebVTT (`text/vtt`) or SubRip (`application/x-subrip`), stored as " +
      "WebVTT (SubRip converted: the same cues, the same text). Cues must be in order (none starting before the one " +
      "before it) and none may end before it starts; hours are two digits (at most 99), so every time is kept as " +
      `given. A second \`PUT\` of a language replaces its track; a video holds at most ${MAX_TRACKS} tracks (one ` +
      "more language is `409 quota_exceeded`). Any video " +
      "but a deleted one takes tracks, whatever its status. Once the video plays, the track is at its `url`, in the " +
      "master playlist's `SUBTITLES` group and on the embed page. A language that is not a BCP 47 tag is " +
      "`invalid_captions`, like the file; a bad `label` is `invalid_query`.",
    middleware: [videoWriter, receiveBody(CAPTIONS_BODY), rateLimit("captions"), wellFormedQuery] as const,
    request: {
      params: CaptionParamsSchema,
      query: CaptionQuerySchema,
      body: binaryBody(
        CAPTION_TYPES,
        "The caption file, UTF-8, at most 2 MiB (2,097,152 bytes); Content-Type names its format",
      ),
    },
    responses: { 200: jsonResponse(TrackSchema, "The track") },
  },
  [
    "unsupported_media_type",
    "payload_too_large",
    "invalid_captions",
    "invalid_query",
    "video_not_found",
    "quota_exceeded",
  ],
);

const list = route(
  {
    method: "get",
    path: "/v1/videos/{id}/captions",
    operationId: "listCaptionTracks",
    tags: ["Captions"],
    summary: "List a video's caption tracks, by language",
    middleware: [videoReader] as const,
    request: { params: CaptionsParamsSchema, query: ProjectQuerySchema },
    responses: { 200: jsonResponse(TrackListSchema, "Every track of the video") },
  },
  ["video_not_found"],
);

const remove = route(
  {
    method: "delete",
    path: "/v1/videos/{id}/captions/{language}",
    operationId: "deleteCaptionTrack",
    tags: ["Captions"],
    summary: "Delete the caption track of a language",
    description: "The track leaves the master playlist and the embed page at once; its file answers 404.",
    middleware: [videoWriter] as const,
    request: { params: CaptionParamsSchema, query: ProjectQuerySchema },
    responses: { 204: { description: "Deleted" } },
  },
  ["video_not_found", "captions_not_found"],
);

const generate = route(
  {
    method: "post",
    path: "/v1/videos/{id}/captions/{language}/generate",
    operationId: "generateCaptionTrack",
    tags: ["Captions"],
    summary: "Generate the caption track of a language from the video's speech",
    description:
      "The track is `processing` at once (`202`), then `ready` (it plays: master playlist, embed page, its `url`), " +
      "`skipped` (the video has no audio, or no speech was heard) or `errored`; `video.captions.ready` or " +
      "`video.captions.errored` tells when. Its default label is the language's English name followed by " +
      "` (auto-generated)`. The speech is heard by Workers AI (Whisper) in production, by the encoder's own " +
      "engine in local development; a language it does not hear is `400 language_not_supported`, and without " +
      "an engine the answer is `503 transcription_unavailable`, saying how to add one. The video must have a source " +
      "(`processing` or `ready`); a track of that language that was uploaded must be deleted first (`409 " +
      "captions_exist`); asking again over a generated track (whatever its status) replaces it. Generated tracks " +
      `count toward the ${MAX_TRACKS}-track limit. A test-mode video's first 10 s are heard. To correct a generated ` +
      "track, download its WebVTT, edit it and `PUT` it back (it becomes an uploaded track).",
    middleware: [videoWriter, idempotent, optionalJsonBody, rateLimit("captions")] as const,
    request: {
      params: CaptionParamsSchema,
      query: ProjectQuerySchema,
      body: { required: false, content: { "application/json": { schema: GenerateRequestSchema } } },
    },
    responses: { 202: jsonResponse(TrackSchema, "The track, processing") },
  },
  [
    "invalid_body",
    "language_not_supported",
    "video_not_found",
    "video_not_ready",
    "captions_exist",
    "quota_exceeded",
    "transcription_unavailable",
  ],
);

export const captionRoutes = createRouter()
  .openapi(
    put,
    async (c) => {
      const params = c.req.valid("param");
      const language = canonicalLanguage(params.language);
      if (!language) {
        throw new ApiError("invalid_captions", {
          details: [{ path: "language", message: "not a BCP 47 language tag of 2 to 35 letters, digits and hyphens" }],
        });
      }
      const vtt = await readCaptionsUpload(c);
      const videoId = parseUlid(params.id);
      if (!videoId) throw new ApiError("video_not_found");
      const { tenant } = c.var;
      const label = c.req.valid("query").label ?? englishName(language);
      const next = {
        key: captionsKey(tenant.projectId, videoId, `${ulid()}.vtt`),
        bytes: vtt,
        httpMetadata: { contentType: "text/vtt" },
      };
      const row = await replaceObject(c.env.MEDIA, next, (key) =>
        swapTrack(c.var.db, tenant, videoId, { language, label, source: "upload", key: key ?? next.key }, Date.now()),
      );
      if (!row) {
        // Nothing written: the video is gone, or the language would be one track too many.
        if ((await listTracks(c.var.db, tenant, videoId)) === null) throw new ApiError("video_not_found");
        throw new ApiError("quota_exceeded", {
          message: `A video holds at most ${MAX_TRACKS} caption tracks: delete one, or replace one of its languages.`,
        });
      }
      return c.json(toTrack(publicOrigin(c), row), 200);
    },
    validationHook({ query: { label: "invalid_query" } }),
  )
  .openapi(generate, async (c) => {
    const params = c.req.valid("param");
    const language = canonicalLanguage(params.language);
    if (!language) {
      throw new ApiError("language_not_supported", {
        details: [{ path: "language", message: "not a BCP 47 language tag of 2 to 35 letters, digits and hyphens" }],
      });
    }
    const video = await found("video_not_found", params.id, (id) => findVideo(c.var.db, c.var.tenant, id));
    const { label } = c.req.valid("json");
    const track = await askForTrack(c.env, c.var.db, c.var.tenant, video, { language, label }, publicOrigin(c));
    return c.json(track, 202);
  })
  .openapi(list, async (c) => {
    const tracks = await found("video_not_found", c.req.valid("param").id, (id) =>
      listTracks(c.var.db, c.var.tenant, id),
    );
    const origin = publicOrigin(c);
    return c.json({ data: tracks.map((row) => toTrack(origin, row)) }, 200);
  })
  .openapi(remove, async (c) => {
    const params = c.req.valid("param");
    // A language that is no tag names no track, of a video that must exist all the same.
    const language = canonicalLanguage(params.language) ?? "";
    const { key } = await found("video_not_found", params.id, (id) =>
      deleteTrack(c.var.db, c.var.tenant, id, language),
    );
    if (!key) throw new ApiError("captions_not_found");
    try {
      await c.env.MEDIA.delete(key);
    } catch (error) {
      // The track is gone (no row points at the object); the object goes with the video's prefix.
      logError("captions: delete object", error, { videoId: params.id, key });
    }
    return c.body(null, 204);
  });
