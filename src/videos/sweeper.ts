import { abortUpload, type CleanUpStore, cleanUpDeleted } from "./cleanup";
import { clearExpiredUploads, expiredUploads, pendingCleanups } from "./queries";
import { forEachVideo } from "./r2-work";

const BATCH = 100;

/** Retries the R2 clean-up of deleted videos that a delete could not finish at the time. */
export async function sweepDeletedVideos(store: CleanUpStore): Promise<void> {
  await cleanUpDeleted(store, await pendingCleanups(store.db, BATCH));
}

/**
 * Aborts the R2 multipart uploads of upload sessions that expired unfinished, so an abandoned
 * upload holds no storage; the video stays, waiting for an upload it can no longer get.
 */
export async function sweepExpiredUploads(
  store: Pick<CleanUpStore, "db" | "media">,
  now: number = Date.now(),
): Promise<number> {
  const rows = await expiredUploads(store.db, now, BATCH);
  const aborted = await forEachVideo(rows, (row) => abortUpload(store.media, row), "expired upload: abort");
  await clearExpiredUploads(store.db, aborted);
  return aborted.length;
}
