import type { Db } from "../lib/db";
import { logError } from "../lib/log";
import { abortMultipartUpload, deleteAll } from "../lib/r2";
import { videoPrefix } from "../lib/storage-keys";
import { clearCleanedUp, type PendingCleanup } from "./cleanup-queries";
import type { VideoRow } from "./model";
import { forEachVideo } from "./r2-work";

/**
 * How the clean-up ends a tus upload: its object aborts the multipart upload and drops the tail it
 * keeps. The uploads capability gives it (`tusUploads`, src/uploads/tus/objects.ts); it sits above
 * videos, so the clean-up takes it rather than importing it.
 */
export type TusUploads = { end(uploadId: string): Promise<void> };

/** What the clean-up touches: D1, R2, and the tus uploads. */
export type CleanUpStore = { db: Db; media: R2Bucket; uploads: TusUploads };

/**
 * Removes what deleted videos leave in R2: aborts their multipart uploads, deletes everything under
 * their prefix (source, encoded outputs, poster, thumbnails) and a custom thumbnail written under
 * the legacy layout, then forgets the videos that are clean. One that fails stays recorded, for a
 * retry of the message or the scheduled sweeper. Returns how many failed.
 *
 * A source that clips read (docs/import-clips-search.md#clips-as-videos-clipof: a clip outlives the
 * video it was cut from) is kept while any of them is not cleaned up; whichever of them is cleaned
 * up last removes it. Each looks only after it is recorded clean, so of two cleaned up at once at
 * least one sees the other clean.
 */
export async function cleanUpDeleted(store: CleanUpStore, rows: PendingCleanup[]): Promise<number> {
  const pending = rows.filter((row) => row.deleted_at !== null && row.storage_cleared_at === null);
  if (pending.length === 0) return 0;
  const clean = await forEachVideo(pending, (row) => cleanUpOne(store, row), "delete: clean up R2");
  try {
    const unneeded = await clearCleanedUp(store.db, clean);
    if (unneeded.length > 0) await store.media.delete(unneeded);
  } catch (error) {
    // A shared source left behind is under a deleted video's prefix: the project's purge removes it.
    logError("delete: record clean-up", error, { count: clean.length });
  }
  return pending.length - clean.length;
}

async function cleanUpOne(store: CleanUpStore, row: PendingCleanup): Promise<void> {
  await endUpload(store, row);
  if (row.custom_thumbnail_key) await store.media.delete(row.custom_thumbnail_key);
  // The video's own source stays while a clip of it needs it.
  await deleteAll(store.media, videoPrefix(row.project_id, row.id), row.clips_pending ? row.source_key : undefined);
}

/**
 * Ends the video's open upload: a tus upload through its object (which aborts the multipart upload
 * and drops the tail it keeps), then the multipart upload itself, which is all a part upload has.
 */
export async function endUpload(
  store: Pick<CleanUpStore, "media" | "uploads">,
  row: Pick<VideoRow, "source_key" | "upload_r2_id" | "tus_upload_id">,
): Promise<void> {
  const uploadId = row.upload_r2_id;
  if (!uploadId) return;
  if (row.tus_upload_id) await store.uploads.end(row.tus_upload_id);
  await abortMultipartUpload(store.media, row.source_key, uploadId);
}
