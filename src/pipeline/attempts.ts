import { z } from "zod";
import type { Config } from "../config";
import { readSettings } from "../encoding/queries";
import { DEFAULT_SETTINGS, type EncodingDocument, POSITIONS, RESOLUTIONS } from "../encoding/settings";
import { signText, timingSafeEqual } from "../lib/crypto";
import type { Db } from "../lib/db";
import { logError } from "../lib/log";
import { deleteAll } from "../lib/r2";
import { acceptedSecrets, type RotatingSecret } from "../lib/secrets";
import { encodeOutputKey, encodePrefix, posterKey, watermarkCopyKey } from "../lib/storage-keys";
import { isoTime } from "../lib/time";
import { ulid } from "../lib/ulid";
import type { VideoRow } from "../videos/model";
import { videoAt } from "../videos/present";
import type { Encoder, Job } from "./encoder";
import { outcomeEvent } from "./events";
import { claimAttempt, endAttempt, type Outcome, unclaimAttempt, videoState } from "./queries";

/** Attempts per video (contract section 12): a failed one is retried until this many have run. */
export const MAX_ATTEMPTS = 3;
/** An attempt whose encoder has been silent this long has lost it, and is taken over. */
export const SILENCE_MS = 60_000;

/** The settings an encoding keeps for all its attempts (`videos.encode_settings`): the project's when the first one started. */
const EncodeSettingsSchema = z.strictObject({
  enabledResolutions: z.array(z.enum(RESOLUTIONS)).min(1),
  mp4: z.boolean(),
  watermark: z
    .strictObject({ position: z.enum(POSITIONS), opacity: z.number().min(0).max(1), imageKey: z.string() })
    .nullable(),
});
export type EncodeSettings = z.infer<typeof EncodeSettingsSchema>;

/** What running the pipeline needs; each piece is one binding or value, so tests can hand in their own. */
export type PipelineDeps = {
  db: Db;
  media: R2Bucket;
  encoder: Encoder;
  /** Sends a video to the encodings queue again (a retry after a failed attempt). */
  requeue: (message: { projectId: string; videoId: string }) => Promise<void>;
  /** Publishes recorded events now (the outbox's sweep covers a failure). */
  publish: (eventIds: string[]) => Promise<void>;
  config: Pick<Config, "callbackSecret" | "publicBaseUrl" | "callbackOrigin">;
};

function snapshot(document: EncodingDocument): EncodeSettings {
  const { watermark } = document;
  return {
    enabledResolutions: document.enabledResolutions,
    mp4: document.mp4FallbackEnabled,
    watermark:
      watermark.enabled && watermark.imageKey
        ? { position: watermark.position, opacity: watermark.opacity, imageKey: watermark.imageKey }
        : null,
  };
}

export function settingsOf(row: VideoRow): EncodeSettings {
  return row.encode_settings ? EncodeSettingsSchema.parse(JSON.parse(row.encode_settings)) : snapshot(DEFAULT_SETTINGS);
}

/**
 * The bearer token of one attempt's callbacks: only this Worker can make it, and it names the
 * attempt. Signed with ENCODER_CALLBACK_SECRET's current value.
 */
export function callbackToken(secret: RotatingSecret, videoId: string, attempt: number): Promise<string> {
  return signText(secret.current, "encoder-callback", `${videoId}.${attempt}`);
}

/** Whether `token` is the attempt's, under the secret's current value or, during a rotation, its previous one. */
export async function isCallbackToken(secret: RotatingSecret, videoId: string, attempt: number, token: string) {
  let valid = false;
  for (const value of acceptedSecrets(secret)) {
    const expected = await signText(value, "encoder-callback", `${videoId}.${attempt}`);
    if (timingSafeEqual(expected, token)) valid = true;
  }
  return valid;
}

/** Where the encoder calls back about one attempt (the internal routes, `callback-routes.ts`). */
export const CALLBACK_PATH = "/internal/encoding";

/**
 * Starts the next attempt of an uploaded video: claims it in D1 (so one attempt runs at a time,
 * however many messages name the video), then hands the job to an encoder. An encoder that says it
 * is busy, or refuses the job, gives the claim back, so the attempt does not count: it never ran.
 * One that cannot be reached, or does not answer in time, may have taken the job all the same, so
 * the claim stands and the attempt counts; if it never ran, its silence ends it within a minute.
 * `done` when there is nothing to start (the video is not uploaded any more), `busy` to ask again
 * later.
 */
export async function startAttempt(
  deps: PipelineDeps,
  message: { projectId: string; videoId: string },
  now: number = Date.now(),
): Promise<"started" | "done" | "busy"> {
  const origin = deps.config.callbackOrigin;
  if (!origin) throw new Error("ENCODER_CALLBACK_URL or PUBLIC_BASE_URL must be set for the encoder to call back");
  const settings = (await readSettings(deps.db, message.projectId))?.document ?? DEFAULT_SETTINGS;
  const row = await claimAttempt(deps.db, message.videoId, JSON.stringify(snapshot(settings)), MAX_ATTEMPTS, now);
  if (!row) return "done";
  const kept = settingsOf(row);
  if (kept.watermark && row.encode_attempt === 1) await keepWatermark(deps.media, row, kept.watermark.imageKey);
  const job: Job = {
    version: 1,
    jobId: row.id,
    attempt: row.encode_attempt,
    callback: {
      baseUrl: `${origin}${CALLBACK_PATH}/${row.id}/${row.encode_attempt}`,
      token: await callbackToken(deps.config.callbackSecret, row.id, row.encode_attempt),
    },
    settings: {
      enabledResolutions: kept.enabledResolutions,
      mp4: kept.mp4,
      watermark: kept.watermark ? { position: kept.watermark.position, opacity: kept.watermark.opacity } : null,
    },
  };
  let answer: "accepted" | "busy" | "refused";
  try {
    answer = await deps.encoder.start(job);
  } catch (error) {
    logError("encoding: start (the attempt stands; its silence ends it if it never ran)", error, { videoId: row.id });
    return "started";
  }
  if (answer === "accepted") return "started";
  await unclaimAttempt(deps.db, row.id, row.encode_attempt, now);
  if (answer === "refused") throw new Error("the encoder refused the job");
  return "busy";
}

/**
 * Keeps the video's own copy of the watermark image its settings named, so that every attempt
 * draws the same image even after the project's is replaced (and the old one deleted). Best effort:
 * the image's call-back falls back to the key the settings named.
 */
async function keepWatermark(media: R2Bucket, row: VideoRow, imageKey: string): Promise<void> {
  try {
    const image = await media.get(imageKey);
    if (image)
      await media.put(watermarkCopyKey(row.project_id, row.id), image.body, { httpMetadata: image.httpMetadata });
  } catch (error) {
    logError("encoding: keep the watermark image", error, { videoId: row.id });
  }
}

/** The origin of public URLs in events made off a client's request. */
function eventOrigin(config: PipelineDeps["config"]): string {
  const origin = config.publicBaseUrl ?? config.callbackOrigin;
  if (!origin) throw new Error("PUBLIC_BASE_URL or ENCODER_CALLBACK_URL must be set for the URLs in events");
  return origin;
}

/**
 * Ends an attempt as its result (or its silence) says: ready; errored at once for a source that
 * is not a video, or after the last attempt; otherwise back to `uploaded` and queued again. The
 * video's event is recorded with the change and published. A takeover (`silentSince`) also stops
 * the attempt's encoder, once the attempt is over and before another is queued, so it can only
 * stop this one. A void attempt (deleted video, taken over, ended already) changes nothing.
 * Outputs that will never be served are removed.
 */
export async function endWith(
  deps: PipelineDeps,
  row: VideoRow,
  result: { status: "ready"; outcome: Extract<Outcome, { status: "ready" }> } | FailedAttempt,
  options: { silentSince?: string } = {},
  now: number = Date.now(),
): Promise<VideoRow | null> {
  let outcome = result.status === "ready" ? result.outcome : failureOutcome(row, result);
  if (outcome.status === "ready") {
    // The poster goes where the automatic thumbnail URL reads it (section 7), before the video is
    // ready; a void attempt's copy is dealt with below.
    const poster = await deps.media.get(encodeOutputKey(row.project_id, row.id, row.encode_attempt, "poster.jpg"));
    if (poster) {
      await deps.media.put(posterKey(row.project_id, row.id), poster.body, {
        httpMetadata: { contentType: "image/jpeg" },
      });
    } else {
      outcome = failureOutcome(row, {
        status: "failed",
        code: "encoding_failed",
        message: "The encoder reported outputs it had not stored.",
      });
    }
  }
  const eventId = ulid(now);
  const origin = eventOrigin(deps.config);
  const ended = await endAttempt(
    deps.db,
    row,
    outcome,
    now,
    (after) => (after.status === "uploaded" ? null : { id: eventId, event: outcomeEvent(videoAt(origin, after, now)) }),
    options.silentSince,
  );
  if (!ended) {
    await clearVoidAttempt(deps, row, outcome.status === "ready");
    return null;
  }
  if (options.silentSince) {
    // If its encoder is still there (only its reports were lost), it stops now.
    await deps.encoder
      .cancel(row.id)
      .catch((error) => logError("encoding takeover: cancel", error, { videoId: row.id }));
  }
  if (ended.status === "ready") {
    await removeOutputs(deps.media, ended, "others");
  } else {
    await removeOutputs(deps.media, ended, row.encode_attempt);
    if (ended.status === "errored") await deps.media.delete(posterKey(row.project_id, row.id));
  }
  if (ended.status === "uploaded") await deps.requeue({ projectId: ended.project_id, videoId: ended.id });
  else await deps.publish([eventId]).catch((error) => logError("encoding: publish", error, { videoId: row.id }));
  return ended;
}

/**
 * What a void attempt leaves: its outputs, unless the video still uses them (the attempt made it
 * ready after all, or still runs: a late heartbeat beat the takeover), and the poster it copied
 * when the video is gone or not ready. Best effort, logged.
 */
async function clearVoidAttempt(deps: PipelineDeps, row: VideoRow, copiedPoster: boolean): Promise<void> {
  try {
    const now = await videoState(deps.db, row.id);
    const attempt = row.encode_attempt;
    const inUse =
      now !== null &&
      now.deleted_at === null &&
      (now.output_attempt === attempt || (now.status === "processing" && now.encode_attempt === attempt));
    if (!inUse) await removeOutputs(deps.media, row, attempt);
    if (copiedPoster && (now === null || now.deleted_at !== null || now.status !== "ready")) {
      await deps.media.delete(posterKey(row.project_id, row.id));
    }
  } catch (error) {
    logError("encoding: clear a void attempt", error, { videoId: row.id });
  }
}

export type FailedAttempt = { status: "failed"; code: "invalid_source" | "encoding_failed"; message: string };

function failureOutcome(row: VideoRow, failure: FailedAttempt): Outcome {
  if (failure.code === "invalid_source") return { status: "errored", code: "invalid_source", message: failure.message };
  if (row.encode_attempt < MAX_ATTEMPTS) return { status: "uploaded" };
  return {
    status: "errored",
    code: "encoding_failed",
    message: `The video could not be encoded: ${MAX_ATTEMPTS} attempts failed.`,
  };
}

/**
 * Removes one attempt's outputs, or every attempt's but the served one (`others`). Best effort: a
 * failure is logged, and what remains goes with the video's prefix when the video is deleted.
 */
async function removeOutputs(media: R2Bucket, row: VideoRow, which: number | "others"): Promise<void> {
  const attempts =
    which === "others"
      ? Array.from({ length: row.encode_attempt }, (_, i) => i + 1).filter((n) => n !== row.output_attempt)
      : [which];
  try {
    await Promise.all(attempts.map((attempt) => deleteAll(media, encodePrefix(row.project_id, row.id, attempt))));
  } catch (error) {
    logError("encoding: remove outputs", error, { videoId: row.id });
  }
}

/** When an attempt counts as silent: not heard from since this instant. */
export function silenceCutoff(now: number): string {
  return isoTime(now - SILENCE_MS);
}
