import type { Word } from "../../media-plan/protocol.mjs";
import { readConfig } from "../config";
import { ApiError } from "../http/errors";
import type { Db } from "../lib/db";
import { englishName } from "../lib/language";
import { logError } from "../lib/log";
import { replaceObject } from "../lib/replace-object";
import { captionsKey } from "../lib/storage-keys";
import { modeOf, type Tenant } from "../lib/tenant";
import { ulid } from "../lib/ulid";
import type { NewEvent } from "../outbox/queries";
import { sendHear } from "../queues/encodings";
import { hearing } from "../speech/engine";
import { heardAs } from "../speech/languages";
import { type VideoRow, WITH_SOURCE } from "../videos/model";
import { cuesOf } from "./cues";
import { trackEvent } from "./events";
import { type CaptionRow, type Track, toTrack } from "./model";
import {
  finishGeneratedTrack,
  generatedTrackRefusal,
  processingTrack,
  startGeneratedTrack,
  type TrackOutcome,
} from "./queries";
import { type Cue, toWebVtt } from "./webvtt";

/**
 * Generated caption tracks (docs/generated-captions.md): asked for by `POST …/captions/{language}/
 * generate` or by the video's creation (`generatedCaptions`, once it is playable), heard by the
 * video's coordinator (through the encodings queue, whose inbox it is), and made here of what it
 * heard (the caption-generations queue).
 */

/** The default label of a generated track: the language's English name, marked as made by machine. */
export function generatedLabel(language: string): string {
  return `${englishName(language)} (auto-generated)`;
}

/**
 * Asks for a generated track of `language` (canonical BCP 47) for `video` (found for the tenant),
 * in the order of the route's refusals: no engine (503 transcription_unavailable), a language it
 * does not hear (400 language_not_supported, naming those it does), a video without a source being
 * encoded or encoded (409 video_not_ready), an uploaded track of that language (409
 * captions_exist), one language too many (409 quota_exceeded). The track is `processing` at once;
 * its speech is heard in the background.
 */
export async function askForTrack(
  env: Env,
  db: Db,
  tenant: Tenant,
  video: VideoRow,
  request: { language: string; label?: string | undefined },
  origin: string,
): Promise<Track> {
  const engine = await hearing(env);
  if ("unavailable" in engine) throw new ApiError("transcription_unavailable", { message: engine.unavailable });
  const code = heardAs(request.language, engine.languages);
  if (!code) {
    throw new ApiError("language_not_supported", {
      message: `Captions cannot be generated in ${request.language}: the speech engine hears ${engine.languages.join(", ")}.`,
    });
  }
  if (!WITH_SOURCE.includes(video.status)) throw new ApiError("video_not_ready");
  const generation = ulid();
  const track = { language: request.language, label: request.label ?? generatedLabel(request.language), generation };
  const row = await replaceObject(env.MEDIA, null, () => startGeneratedTrack(db, tenant, video.id, track, Date.now()));
  if (!row) {
    const refusal = await generatedTrackRefusal(db, tenant, video.id, request.language);
    if (refusal === "captions_exist") {
      throw new ApiError("captions_exist", {
        message: `The video has an uploaded ${request.language} track: delete it first to generate one.`,
      });
    }
    throw new ApiError(refusal);
  }
  try {
    await sendHear(env.ENCODE_QUEUE, {
      projectId: video.project_id,
      videoId: video.id,
      hear: { language: request.language, generation, heardAs: code, recognizer: engine.recognizer },
    });
  } catch (error) {
    logError("captions: ask for the speech", error, { videoId: video.id });
    // Its event is published by the scheduled sweep (a route cannot reach the subscribers).
    const failed = {
      status: "errored" as const,
      message: "The speech could not be heard: its work could not be started.",
    };
    await end(env, db, { videoId: video.id, language: request.language, generation }, row, failed, async () => {});
    throw new ApiError("internal_error");
  }
  return toTrack(origin, row);
}

/**
 * The video became playable: the tracks its creation asked to be generated are asked for now, as
 * the route would then. One that the route would refuse (its language uploaded meanwhile, the
 * video full, the engine gone) is not made; that is logged.
 */
export async function askForCreationTracks(env: Env, db: Db, video: VideoRow, languages: string[]): Promise<void> {
  const tenant: Tenant = { projectId: video.project_id, mode: modeOf(video.livemode) };
  for (const language of languages) {
    try {
      await askForTrack(env, db, tenant, video, { language }, origin(env));
    } catch (error) {
      if (!(error instanceof ApiError)) throw error;
      logError("captions: a track asked for at creation was not made", error.code, { videoId: video.id, language });
    }
  }
}

/** What the coordinator heard of a track: the words in R2, none (a silent video), or a failure. */
export type Heard = { kind: "words"; wordsKey: string } | { kind: "silent" } | { kind: "failed"; message: string };

/** Publishes the outbox's events of these ids now (src/subscribers.ts, given by the queue's wiring). */
export type Publish = (eventIds: string[]) => Promise<void>;

type GenerationOf = { videoId: string; language: string; generation: string };

/**
 * Makes the generated track that generation `generation` of `language` asked for, of what was
 * heard: the WebVTT of the words' cues (`ready`), `skipped` when nothing was said (or the video has
 * no audio), or `errored`; its event (ready, errored) is published at once. Nothing changes when
 * that generation is no longer the track's (asked for again, replaced by an upload, deleted). The
 * words' object goes either way.
 */
export async function makeTrack(env: Env, db: Db, track: GenerationOf, heard: Heard, publish: Publish): Promise<void> {
  const processing = await processingTrack(db, track.videoId, track.language, track.generation);
  if (heard.kind === "words") {
    const stored = processing ? await env.MEDIA.get(heard.wordsKey) : null;
    if (processing && stored) {
      const cues = cuesOf((await stored.json()) as Word[], processing.duration);
      await end(env, db, track, processing.row, cues.length > 0 ? { cues } : { status: "skipped" }, publish);
    }
    await env.MEDIA.delete(heard.wordsKey);
  } else if (processing) {
    const outcome =
      heard.kind === "silent" ? { status: "skipped" as const } : { status: "errored" as const, message: heard.message };
    await end(env, db, track, processing.row, outcome, publish);
  }
}

/**
 * Ends the track (`row`, still processing under its generation): ready with the WebVTT of `cues`
 * (stored first, so the row never points at a missing object), skipped or errored; then publishes
 * the event the end recorded.
 */
async function end(
  env: Env,
  db: Db,
  track: GenerationOf,
  row: CaptionRow,
  outcome: { cues: Cue[] } | Exclude<TrackOutcome, { status: "ready" }>,
  publish: Publish,
): Promise<void> {
  const recorded: string[] = [];
  const event = (after: CaptionRow) => {
    const made = eventOf(env, after);
    if (made) recorded.push(made.id);
    return made;
  };
  const next =
    "cues" in outcome
      ? {
          key: captionsKey(row.project_id, track.videoId, `${ulid()}.vtt`),
          bytes: new TextEncoder().encode(toWebVtt(outcome.cues)),
          httpMetadata: { contentType: "text/vtt" },
        }
      : null;
  const ended = await replaceObject(env.MEDIA, next, (key) => {
    const final: TrackOutcome = "cues" in outcome ? { status: "ready", key: key ?? "" } : outcome;
    return finishGeneratedTrack(db, track, final, Date.now(), event, row);
  });
  if (!ended || recorded.length === 0) return;
  await publish(recorded).catch((error) =>
    logError("captions: publish a track's event (the sweep publishes it)", error, { videoId: track.videoId }),
  );
}

/** The event of a track that ended ready or errored (a skipped one has none), with the track's public URL. */
function eventOf(env: Env, after: CaptionRow): NewEvent | null {
  if (after.status !== "ready" && after.status !== "errored") return null;
  const track = toTrack(origin(env), after);
  const at = after.updated_at;
  const event = trackEvent({ id: after.video_id, projectId: after.project_id }, track, at);
  return {
    id: ulid(Date.parse(at)),
    type: event.type,
    subjectId: after.video_id,
    payload: event,
    occurrence: after.generation ?? "",
  };
}

/** The origin of public URLs in what is sent outside a request: PUBLIC_BASE_URL, else where the encoder calls back. */
function origin(env: Env): string {
  const config = readConfig(env);
  const base = config.publicBaseUrl ?? config.callbackOrigin;
  if (!base) throw new Error("PUBLIC_BASE_URL or ENCODER_CALLBACK_URL must be set for the URLs in events");
  return base;
}
