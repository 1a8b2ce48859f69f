import { abortUpload, type CleanUpStore } from "../videos/cleanup";
import { forEachVideo } from "../videos/r2-work";
import { SWEEP_BATCH } from "../videos/sweeper";
import { clearExpiredUploads, expiredUploads } from "./source-queries";

/**
 * Aborts the R2 multipart uploads of upload sessions that expired unfinished, so an abandoned
 * upload holds no storage; the video stays, waiting for an upload it can no longer get.
 */
export async function sweepExpiredUploads(
  store: Pick<CleanUpStore, "db" | "media">,
  now: number = Date.now(),
): Promise<number> {
  const rows = await expiredUploads(store.db, now, SWEEP_BATCH);
  const aborted = await forEachVideo(rows, (row) => abortUpload(store.media, row), "expired upload: abort");
  await clearExpiredUploads(store.db, aborted);
  return aborted.length;
}
