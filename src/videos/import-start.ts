import { z } from "zod";
import { ApiError } from "../http/errors";
import type { Db } from "../lib/db";
import { logError } from "../lib/log";
import { type TargetRules, targetProblem } from "../lib/safe-targets";
import { sourceKey } from "../lib/storage-keys";
import { creationMode, type Tenant } from "../lib/tenant";
import { CanonicalUlidSchema, ulid } from "../lib/ulid";
import { newImportRow, type VideoChoices, type VideoRow } from "./model";
import { insertVideoStatement } from "./queries";

/**
 * The start of an import from a URL (contract §19): the video's row, `importing`, and the message
 * that hands it to the imports queue's consumer (src/imports/, which fetches it). Here, beside the
 * other ways a video is created, so that `POST /v1/videos` needs nothing of src/imports/, which
 * itself builds on videos/ (a folder may not import one that imports it back).
 */

export const IMPORT_QUEUE = "video-imports";
export const IMPORT_DEAD_LETTERS = "video-imports-dlq";

/** An added audio track of a video (docs/audio-tracks.md): its language and the generation (PUT) to fetch the file of. */
export const TrackRefSchema = z.strictObject({
  language: z.string().regex(/^[A-Za-z0-9-]{2,35}$/),
  generation: CanonicalUlidSchema,
});
export type TrackRef = z.infer<typeof TrackRefSchema>;

/**
 * A file to fetch: a video's own source, or, with `track`, an added audio track's file. Its row is
 * the record (the video importing, the track processing with its URL); the sweeper sends a lost
 * message again.
 */
export const ImportMessageSchema = z.strictObject({
  projectId: CanonicalUlidSchema,
  videoId: CanonicalUlidSchema,
  track: TrackRefSchema.optional(),
});
export type ImportMessage = z.infer<typeof ImportMessageSchema>;

/** The name of an import's object (src/imports/object.ts): its video's id, or its track's generation beside it. */
export function importName(message: Pick<ImportMessage, "videoId" | "track">): string {
  return message.track ? `${message.videoId}/audio/${message.track.generation}` : message.videoId;
}

export function sendImport(queue: Queue, message: ImportMessage): Promise<unknown> {
  return queue.send(ImportMessageSchema.parse(message));
}

/** The URL to import, normalized, if it is a safe target (as a webhook's, §10); else invalid_body on `sourceUrl`. */
export function importUrl(text: string, rules: TargetRules): string {
  const problem = targetProblem(text, rules);
  if (problem) throw new ApiError("invalid_body", { details: [{ path: "sourceUrl", message: problem }] });
  return new URL(text).toString();
}

export type ImportedVideo = VideoChoices & { url: string };

/**
 * Records a new video `importing` from `video.url` (already checked by `importUrl`) and queues its
 * fetch. It has no upload session: the consumer opens the R2 multipart upload on its first run. A
 * send that fails is logged, not thrown: the video is recorded, and the sweeper sends its message.
 */
export async function createImportedVideo(
  db: Db,
  queue: Queue,
  tenant: Tenant,
  video: ImportedVideo,
  now: number,
): Promise<VideoRow> {
  const id = ulid(now);
  const row = newImportRow({
    ...video,
    id,
    projectId: tenant.projectId,
    mode: creationMode(tenant),
    sourceKey: sourceKey(tenant.projectId, id),
    now,
  });
  await insertVideoStatement(db, row).run();
  try {
    await sendImport(queue, { projectId: row.project_id, videoId: row.id });
  } catch (error) {
    logError("import: queue send (the sweeper sends it)", error, { videoId: row.id });
  }
  return row;
}
