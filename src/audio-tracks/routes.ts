import type { Context } from "hono";
import type { TenantEnv } from "../auth/context";
import { videoReader, videoWriter } from "../auth/guards";
import { mediaType, readJsonText } from "../http/body";
import { ApiError } from "../http/errors";
import { found } from "../http/found";
import { wellFormedQuery } from "../http/query";
import { route, selfReadJson } from "../http/route";
import { createRouter } from "../http/router";
import { jsonResponse } from "../http/schemas";
import { issueDetails, validationHook } from "../http/validation";
import { canonicalLanguage, englishName } from "../lib/language";
import { logError } from "../lib/log";
import { replaceObject } from "../lib/replace-object";
import { audioTrackSourceKey } from "../lib/storage-keys";
import { ulid } from "../lib/ulid";
import { rateLimit } from "../rate-limit/middleware";
import { importUrl } from "../videos/import-start";
import { planOf, type VideoRow } from "../videos/model";
import { ProjectQuerySchema } from "../videos/schemas";
import { askToMake, letGo, startTrackImport, tellDeleted } from "./making";
import {
  type AudioTrackRow,
  addedTrackLimit,
  MAX_AUDIO_TRACK_BYTES,
  MAX_AUDIO_TRACKS,
  originalTrack,
  toAudioTrack,
} from "./model";
import { deleteAudioTrack, startAudioTrack, videoWithAudioTracks } from "./queries";
import {
  AudioTrackListSchema,
  AudioTrackParamsSchema,
  AudioTrackQuerySchema,
  AudioTrackSchema,
  AudioTrackUrlSchema,
} from "./schemas";

const AudioTracksParamsSchema = AudioTrackParamsSchema.pick({ id: true });

/** The JSON body's component: the route reads its body itself (it may be a file's bytes instead). */
const URL_BODY = "AudioTrackSourceUrl";

const put = route(
  {
    method: "put",
    path: "/v1/videos/{id}/audio-tracks/{language}",
    operationId: "putAudioTrack",
    tags: ["Audio tracks"],
    summary: "Add or replace the audio track of a language, from an audio or video file (at most 100 MB) or a URL",
    description:
      "The body is the file itself (any `Content-Type` but `application/json`, with a `Content-Length`; at most " +
      '100 MB), or `application/json` `{"sourceUrl"}`, a file the service fetches as it imports a video from a ' +
      "URL. The track is the file's first audio stream, as AAC, cut at the video's own segments so that players " +
      "switch between it and the original seamlessly: `processing` at once (`202`), then `ready` (in the master " +
      "playlist and the embed page's audio menu) or `errored` (`invalid_source`: no audio stream, or it does not " +
      "decode). A track longer than the video is cut to it; a shorter one ends in silence. The video must be " +
      "`ready`. A second `PUT` of a language replaces its track; the language of the video's own audio cannot be " +
      `put (\`409 original_audio\`); a video holds at most ${MAX_AUDIO_TRACKS} tracks, its own audio counted. A ` +
      "language that is not a BCP 47 tag is `invalid_body`; a bad `label` is `invalid_query`.",
    middleware: [videoWriter, rateLimit("audio_tracks"), wellFormedQuery] as const,
    request: {
      params: AudioTrackParamsSchema,
      query: AudioTrackQuerySchema,
      body: {
        required: true,
        description: "The track's file (any type but JSON), or a JSON body naming its URL",
        content: {
          "application/json": selfReadJson(URL_BODY, AudioTrackUrlSchema),
          "application/octet-stream": { schema: { type: "string", format: "binary" } },
        },
      },
    },
    responses: { 202: jsonResponse(AudioTrackSchema, "The track, processing") },
  },
  [
    "invalid_body",
    "invalid_query",
    "payload_too_large",
    "video_not_found",
    "video_not_ready",
    "original_audio",
    "quota_exceeded",
  ],
);

const list = route(
  {
    method: "get",
    path: "/v1/videos/{id}/audio-tracks",
    operationId: "listAudioTracks",
    tags: ["Audio tracks"],
    summary: "List a video's audio tracks: its own audio first, then the added ones by language",
    middleware: [videoReader] as const,
    request: { params: AudioTracksParamsSchema, query: ProjectQuerySchema },
    responses: { 200: jsonResponse(AudioTrackListSchema, "Every audio track of the video") },
  },
  ["video_not_found"],
);

const remove = route(
  {
    method: "delete",
    path: "/v1/videos/{id}/audio-tracks/{language}",
    operationId: "deleteAudioTrack",
    tags: ["Audio tracks"],
    summary: "Delete the added audio track of a language",
    description:
      "The track leaves the master playlist at once, and its files go. The video's own audio cannot be deleted " +
      "(`409 original_audio`).",
    middleware: [videoWriter] as const,
    request: { params: AudioTrackParamsSchema, query: ProjectQuerySchema },
    responses: { 204: { description: "Deleted" } },
  },
  ["video_not_found", "original_audio", "audio_track_not_found"],
);

type PutContext = Context<TenantEnv>;

/** The track's file, from the request: its bytes (a stream of a known length) and their type. */
type Upload = { kind: "bytes"; body: ReadableStream; type: string } | { kind: "url"; url: string };

/**
 * What the request sends as the track: a JSON body naming a URL (checked as an import's), or the
 * file's bytes, which must say their length (R2 stores a stream of known length) and be at most
 * MAX_AUDIO_TRACK_BYTES. The bytes are not read here: they go to R2 as they arrive.
 */
async function uploadOf(c: PutContext): Promise<Upload> {
  const type = mediaType(c.req.header("content-type"));
  if (type === "application/json") {
    const parsed = AudioTrackUrlSchema.safeParse(JSON.parse(await readJsonText(c)));
    if (!parsed.success) throw new ApiError("invalid_body", { details: issueDetails(parsed.error.issues) });
    return { kind: "url", url: importUrl(parsed.data.sourceUrl, { allowHttp: c.var.config.allowHttpWebhooks }) };
  }
  const length = Number(c.req.header("content-length") ?? Number.NaN);
  if (length > MAX_AUDIO_TRACK_BYTES) {
    throw new ApiError("payload_too_large", {
      message: "An audio track's file is at most 100 MB (100,000,000 bytes).",
    });
  }
  if (!Number.isSafeInteger(length) || length <= 0 || !c.req.raw.body) {
    throw new ApiError("invalid_body", { message: "The track's file needs a non-empty body with a Content-Length." });
  }
  return { kind: "bytes", body: c.req.raw.body, type: type || "application/octet-stream" };
}

/**
 * Why a track of `language` cannot be put on `video` (which holds `tracks`), in the documented
 * order: the video is not ready (or was encoded before plans, which audio tracks are cut by), the
 * language is its own audio's, or one language too many.
 */
function refusal(video: VideoRow, tracks: AudioTrackRow[], language: string): ApiError | null {
  const plan = planOf(video);
  if (video.status !== "ready") return new ApiError("video_not_ready", { message: "The video must be ready." });
  if (!plan) {
    return new ApiError("video_not_ready", {
      message: "This video was encoded before audio tracks could be added: upload it again to add one.",
    });
  }
  if (originalTrack(video)?.language === language) return new ApiError("original_audio");
  if (!tracks.some((track) => track.language === language) && tracks.length >= addedTrackLimit(plan)) {
    return new ApiError("quota_exceeded", {
      message: `A video holds at most ${MAX_AUDIO_TRACKS} audio tracks, its own audio counted: delete one, or replace one of its languages.`,
    });
  }
  return null;
}

/** A generation of a track of `video` known only by its name. */
function unknownGeneration(video: VideoRow, generation: string) {
  const { project_id, id } = video;
  return {
    project_id,
    video_id: id,
    generation,
    source_key: audioTrackSourceKey(project_id, id, generation),
    import_url: null,
    upload_r2_id: null,
  };
}

export const audioTrackRoutes = createRouter()
  .openapi(
    put,
    async (c) => {
      const params = c.req.valid("param");
      const language = canonicalLanguage(params.language);
      if (!language) {
        throw new ApiError("invalid_body", {
          details: [{ path: "language", message: "not a BCP 47 language tag of 2 to 35 letters, digits and hyphens" }],
        });
      }
      const label = c.req.valid("query").label ?? englishName(language);
      const upload = await uploadOf(c);
      const { db, tenant } = c.var;
      const { video, tracks } = await found("video_not_found", params.id, (id) => videoWithAudioTracks(db, tenant, id));
      const refused = refusal(video, tracks, language);
      if (refused) throw refused;
      const generation = ulid();
      const plan = planOf(video);
      const sourceKey = audioTrackSourceKey(video.project_id, video.id, generation);
      // A file's bytes are stored first; a URL's file is fetched into the same key once the row names it.
      const next =
        upload.kind === "bytes"
          ? { key: sourceKey, bytes: upload.body, httpMetadata: { contentType: upload.type } }
          : null;
      const importUrl = upload.kind === "url" ? upload.url : null;
      const track = { language, label, generation, sourceKey, importUrl };
      const older = tracks.find((one) => one.language === language);
      const row = await replaceObject(
        c.env.MEDIA,
        next,
        () => startAudioTrack(db, tenant, video.id, track, plan ? addedTrackLimit(plan) : 0, Date.now()),
        // The generation put over: as read before (its fetch, if one was under way, to stop), or,
        // put meanwhile by another request, its objects at least.
        (replaced) =>
          letGo(
            { db, media: c.env.MEDIA },
            older?.generation === replaced ? older : unknownGeneration(video, replaced),
          ),
      );
      if (!row) {
        // Nothing written: the video changed meanwhile (deleted), or the language is one too many now.
        const now = await videoWithAudioTracks(db, tenant, video.id);
        if (!now) throw new ApiError("video_not_found");
        throw refusal(now.video, now.tracks, language) ?? new ApiError("internal_error");
      }
      if (importUrl) {
        // Fetched by the imports' machinery (docs/imports.md), then asked of the coordinator.
        await startTrackImport(c.env.IMPORT_QUEUE, row);
      } else {
        try {
          await askToMake(c.env.ENCODE_QUEUE, db, row);
        } catch {
          throw new ApiError("internal_error");
        }
      }
      return c.json(toAudioTrack(row), 202);
    },
    validationHook({ query: { label: "invalid_query" } }),
  )
  .openapi(list, async (c) => {
    const { video, tracks } = await found("video_not_found", c.req.valid("param").id, (id) =>
      videoWithAudioTracks(c.var.db, c.var.tenant, id),
    );
    const original = originalTrack(video);
    return c.json({ data: [...(original ? [original] : []), ...tracks.map(toAudioTrack)] }, 200);
  })
  .openapi(remove, async (c) => {
    const params = c.req.valid("param");
    // A language that is no tag names no track, of a video that must exist all the same.
    const language = canonicalLanguage(params.language) ?? "";
    const { video, deleted } = await found("video_not_found", params.id, (id) =>
      deleteAudioTrack(c.var.db, c.var.tenant, id, language),
    );
    if (originalTrack(video)?.language === language) throw new ApiError("original_audio");
    if (!deleted) throw new ApiError("audio_track_not_found");
    try {
      await letGo({ db: c.var.db, media: c.env.MEDIA }, deleted);
    } catch (error) {
      // The track is gone (no row names its objects); they go with the video's prefix.
      logError("audio tracks: delete objects", error, { videoId: video.id, generation: deleted.generation });
    }
    if (deleted.status === "processing") await tellDeleted(c.env, deleted);
    return c.body(null, 204);
  });

audioTrackRoutes.openAPIRegistry.register(URL_BODY, AudioTrackUrlSchema);
