import { abortUpload, cleanUpDeleted } from "./delete";
import { clearExpiredUploads, expiredUploads, pendingCleanups } from "./queries";
import { forEachVideo } from "./r2-work";

const BATCH = 100;

/** Retries the R2 clean-up of deleted videos that a delete could not finish at the time. */
export async function sweepDeletedVideos(env: Env): Promise<void> {
  await cleanUpDeleted({ db: env.DB, media: env.MEDIA }, await pendingCleanups(env.DB, BATCH));
}

/**
 * Aborts the R2 multipart uploads of upload sessions that expired unfinished, so an abandoned
 * upload holds no storage; the video stays, waiting for an upload it can no longer get.
 */
export async function sweepExpiredUploads(env: Env, now: number = Date.now()): Promise<number> {
  const rows = await expiredUploads(env.DB, now, BATCH);
  const aborted = await forEachVideo(rows, (row) => abortUpload(env.MEDIA, row), "expired upload: abort");
  await clearExpiredUploads(env.DB, aborted);
  return aborted.length;
}
