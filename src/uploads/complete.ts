import type { Db } from "../lib/db";
import { logError } from "../lib/log";
import { R2_ERRORS, r2ErrorCode } from "../lib/r2";
import type { Tenant } from "../lib/tenant";
import { queueEncoding } from "../queues/encodings";
import type { VideoRow } from "../videos/model";
import { canonicalParts } from "./parts";
import { acquireCompletionLease, finishCompletion, releaseCompletionLease } from "./source-queries";

/** What marking a video uploaded touches: D1, and the encodings queue the video goes on to. */
export type UploadedDeps = { db: Db; encodeQueue: Queue };

/** A completion that holds the tenant's video's lease, with the parts R2 assembled the source from. */
export type CompletedUpload = { tenant: Tenant; videoId: string; lease: string; completedParts: string };

/**
 * The one place a video becomes `uploaded`: its source is whole in R2 and the completion that holds
 * its lease records it. Both ways of uploading end here, through `completeUpload`, so whatever must
 * follow every upload (the encoding pipeline, docs/encoding.md#what-it-promises) is started here,
 * once. Null when the lease was lost meanwhile (the video is as another request left it).
 */
export async function markUploaded(deps: UploadedDeps, upload: CompletedUpload, now: number): Promise<VideoRow | null> {
  const uploaded = await finishCompletion(
    deps.db,
    upload.tenant,
    upload.videoId,
    upload.lease,
    upload.completedParts,
    now,
  );
  if (uploaded) await queueEncoding(deps.encodeQueue, uploaded);
  return uploaded;
}

/** What a completion touches: D1, R2 (the multipart upload and the source), the encodings queue. */
export type CompletionDeps = UploadedDeps & { media: R2Bucket };

export type CompletionPart = { partNumber: number; etag: string };

/**
 * What a completion came to:
 * - `uploaded`: R2 assembled the source and the video is recorded `uploaded` (`video` null when
 *   its lease was lost meanwhile, the video then as another request left it);
 * - `busy`: the lease could not be taken (another completion holds it, the video is not waiting
 *   for its upload, or is gone): the caller reads the video to say why;
 * - `parts_refused`: R2 refused the parts (one missing, another etag, one too small): the client's
 *   mistake, the lease given back so it can try again;
 * - `upload_gone`: R2 has no such multipart upload any more, and no source either.
 * Any other failure (R2 or D1 down) is thrown, the lease given back: the caller's 500, or a retry.
 */
export type Completion =
  | { outcome: "uploaded"; video: VideoRow | null }
  | { outcome: "busy" }
  | { outcome: "parts_refused" }
  | { outcome: "upload_gone" };

const PARTS_REFUSED = new Set<number>([R2_ERRORS.invalidPart, R2_ERRORS.entityTooSmall]);

/**
 * Completes a video's upload under its completion lease, the one way both uploads end: the part
 * API's `POST …/upload/complete` and a tus upload's last byte (its Durable Object). Takes the lease
 * (so one completion runs at a time, and one that dies is released after it), completes the R2
 * multipart upload with `parts`, and records the video `uploaded` through `markUploaded`. A
 * completion that died after R2 assembled the source, before D1 recorded it, left the object
 * behind and the multipart upload gone: a retry finishes the record instead of reading R2's
 * "no such upload" as a failure. R2's refusals are told apart by R2's error codes.
 */
export async function completeUpload(
  deps: CompletionDeps,
  video: { tenant: Tenant; videoId: string },
  parts: CompletionPart[],
  clock: () => number = Date.now,
): Promise<Completion> {
  const leased = await acquireCompletionLease(deps.db, video.tenant, video.videoId, clock());
  if (!leased) return { outcome: "busy" };
  const lease = leased.completion_lease_until as string;
  const sorted = [...parts].sort((a, b) => a.partNumber - b.partNumber);
  try {
    await deps.media.resumeMultipartUpload(leased.source_key, leased.upload_r2_id as string).complete(sorted);
  } catch (error) {
    let assembled: boolean;
    try {
      assembled = (await deps.media.head(leased.source_key)) !== null;
    } catch (headError) {
      await releaseCompletionLease(deps.db, video.tenant, leased.id, lease, clock());
      logError("upload complete: R2", error, { videoId: leased.id });
      throw headError;
    }
    if (!assembled) {
      await releaseCompletionLease(deps.db, video.tenant, leased.id, lease, clock());
      // R2's own words go to the log; the caller answers in this API's.
      logError("upload complete: R2 refused", error, { videoId: leased.id, code: r2ErrorCode(error) });
      const code = r2ErrorCode(error);
      if (code !== null && PARTS_REFUSED.has(code)) return { outcome: "parts_refused" };
      if (code === R2_ERRORS.noSuchUpload) return { outcome: "upload_gone" };
      throw error;
    }
    logError("upload complete: R2 had completed it already; recording it now", error, { videoId: leased.id });
  }
  const uploaded = await markUploaded(
    deps,
    { tenant: video.tenant, videoId: leased.id, lease, completedParts: canonicalParts(parts) },
    clock(),
  );
  return { outcome: "uploaded", video: uploaded };
}
