import type { Db } from "../lib/db";
import { logError } from "../lib/log";
import { deleteAll } from "../lib/r2";
import { videoPrefix } from "../lib/storage-keys";
import type { VideoRow } from "./model";
import { clearCleanedUp } from "./queries";
import { forEachVideo } from "./r2-work";

/**
 * Removes what deleted videos leave in R2: aborts their multipart uploads, deletes everything under
 * their prefix (source, encoded outputs, poster, thumbnails) and a custom thumbnail written under
 * the legacy layout, then forgets the videos that are clean. One that fails stays recorded, for a
 * retry of the message or the scheduled sweeper. Returns how many failed.
 */
export async function cleanUpDeleted(store: { db: Db; media: R2Bucket }, rows: VideoRow[]): Promise<number> {
  const pending = rows.filter((row) => row.deleted_at !== null && row.storage_cleared_at === null);
  if (pending.length === 0) return 0;
  const clean = await forEachVideo(pending, (row) => cleanUpOne(store.media, row), "delete: clean up R2");
  try {
    await clearCleanedUp(
      store.db,
      clean.map((row) => row.id),
    );
  } catch (error) {
    logError("delete: record clean-up", error, { count: clean.length });
  }
  return pending.length - clean.length;
}

async function cleanUpOne(media: R2Bucket, row: VideoRow): Promise<void> {
  await abortUpload(media, row);
  if (row.custom_thumbnail_key) await media.delete(row.custom_thumbnail_key);
  await deleteAll(media, videoPrefix(row.project_id, row.id));
}

/** Aborts the video's R2 multipart upload, if it has one; one already gone is not an error. */
export async function abortUpload(media: R2Bucket, row: Pick<VideoRow, "source_key" | "upload_r2_id">) {
  if (!row.upload_r2_id) return;
  try {
    await media.resumeMultipartUpload(row.source_key, row.upload_r2_id).abort();
  } catch (error) {
    // Already completed or aborted: nothing is left to abort.
    if (!/NoSuchUpload|10024/.test(String(error))) throw error;
  }
}
