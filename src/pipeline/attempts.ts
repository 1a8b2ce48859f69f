import type { Config } from "../config";
import { readSettings } from "../encoding/queries";
import { DEFAULT_SETTINGS, type EncodingDocument } from "../encoding/settings";
import { signText, timingSafeEqual } from "../lib/crypto";
import type { Db } from "../lib/db";
import { logError } from "../lib/log";
import { deleteAll } from "../lib/r2";
import { encodeOutputKey, encodePrefix, posterKey } from "../lib/storage-keys";
import { isoTime } from "../lib/time";
import { ulid } from "../lib/ulid";
import type { VideoRow } from "../videos/model";
import { videoAt } from "../videos/present";
import type { Encoder, Job } from "./encoder";
import { outcomeEvent } from "./events";
import { claimAttempt, endAttempt, type Outcome, unclaimAttempt } from "./queries";

/** Attempts per video (contract section 12): a failed one is retried until this many have run. */
export const MAX_ATTEMPTS = 3;
/** An attempt whose encoder has been silent this long has lost it, and is taken over. */
export const SILENCE_MS = 60_000;

/** The settings an encoding keeps for all its attempts: the project's when the first one started. */
export type EncodeSettings = {
  enabledResolutions: EncodingDocument["enabledResolutions"];
  mp4: boolean;
  watermark: { position: string; opacity: number; imageKey: string } | null;
};

/** What running the pipeline needs; each piece is one binding or value, so tests can hand in their own. */
export type PipelineDeps = {
  db: Db;
  media: R2Bucket;
  encoder: Encoder;
  /** Sends a video to the encodings queue again (a retry after a failed attempt). */
  requeue: (message: { projectId: string; videoId: string }) => Promise<void>;
  /** Publishes recorded events now (the outbox's sweep covers a failure). */
  publish: (eventIds: string[]) => Promise<void>;
  config: Pick<Config, "playbackSecret" | "publicBaseUrl" | "callbackOrigin">;
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
  return JSON.parse(row.encode_settings ?? "null") ?? snapshot(DEFAULT_SETTINGS);
}

/** The bearer token of one attempt's callbacks: only this Worker can make it, and it names the attempt. */
export function callbackToken(secret: string, videoId: string, attempt: number): Promise<string> {
  return signText(secret, "encoder-callback", `${videoId}.${attempt}`);
}

export async function isCallbackToken(secret: string, videoId: string, attempt: number, token: string) {
  return timingSafeEqual(await callbackToken(secret, videoId, attempt), token);
}

/** Where the encoder calls back about one attempt (the internal routes, `callback-routes.ts`). */
export const CALLBACK_PATH = "/internal/encoding";

/**
 * Starts the next attempt of an uploaded video: claims it in D1 (so one attempt runs at a time,
 * however many messages name the video), then hands the job to an encoder. An encoder that is busy
 * or cannot be reached gives the claim back, so the attempt does not count. `done` when there is
 * nothing to start (the video is not uploaded any more), `busy` to ask again later.
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
  const job: Job = {
    version: 1,
    jobId: row.id,
    attempt: row.encode_attempt,
    callback: {
      baseUrl: `${origin}${CALLBACK_PATH}/${row.id}/${row.encode_attempt}`,
      token: await callbackToken(deps.config.playbackSecret, row.id, row.encode_attempt),
    },
    settings: {
      enabledResolutions: kept.enabledResolutions,
      mp4: kept.mp4,
      watermark: kept.watermark ? { position: kept.watermark.position, opacity: kept.watermark.opacity } : null,
    },
  };
  let answer: "accepted" | "busy";
  try {
    answer = await deps.encoder.start(job);
  } catch (error) {
    await unclaimAttempt(deps.db, row.id, row.encode_attempt, Date.now());
    throw error;
  }
  if (answer === "busy") {
    await unclaimAttempt(deps.db, row.id, row.encode_attempt, Date.now());
    return "busy";
  }
  return "started";
}

/** The origin of public URLs in events made off a client's request. */
function eventOrigin(config: PipelineDeps["config"]): string {
  return config.publicBaseUrl ?? config.callbackOrigin ?? "";
}

/**
 * Ends an attempt as its result (or its silence) says: ready; errored at once for a source that
 * is not a video, or after the last attempt; otherwise back to `uploaded` and queued again. The
 * video's event is recorded with the change and published. A void attempt (deleted video, taken
 * over) changes nothing. Outputs that will never be served are removed.
 */
export async function endWith(
  deps: PipelineDeps,
  row: VideoRow,
  result: { status: "ready"; outcome: Extract<Outcome, { status: "ready" }> } | FailedAttempt,
  options: { silentSince?: string } = {},
  now: number = Date.now(),
): Promise<VideoRow | null> {
  const outcome = result.status === "ready" ? result.outcome : failureOutcome(row, result);
  if (outcome.status === "ready") {
    // The poster goes where the automatic thumbnail URL reads it (section 7), before the video is ready.
    const poster = await deps.media.get(encodeOutputKey(row.project_id, row.id, row.encode_attempt, "poster.jpg"));
    if (!poster) {
      const message = "The encoder reported outputs it had not stored.";
      return endWith(deps, row, { status: "failed", code: "encoding_failed", message }, options, now);
    }
    await deps.media.put(posterKey(row.project_id, row.id), poster.body, {
      httpMetadata: { contentType: "image/jpeg" },
    });
  }
  const eventId = ulid(now);
  const ended = await endAttempt(
    deps.db,
    row,
    outcome,
    now,
    (after) =>
      after.status === "uploaded"
        ? null
        : { id: eventId, event: outcomeEvent(videoAt(eventOrigin(deps.config), after, now)) },
    options.silentSince,
  );
  if (!ended) {
    // Void (the video was deleted or the attempt taken over): what it wrote is never served.
    await removeOutputs(deps.media, row, row.encode_attempt);
    return null;
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
