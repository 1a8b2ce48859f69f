import type { Db } from "../lib/db";
import { abortMultipartUpload } from "../lib/r2";
import { forEachVideo } from "../videos/r2-work";
import { clearExpiredUploads, expiredUploads } from "./source-queries";

/** How many expired uploads one run of the sweep ends. */
const BATCH = 100;

/**
 * Aborts the R2 multipart uploads of upload sessions that expired unfinished, so an abandoned
 * upload holds no storage; the video stays, waiting for an upload it can no longer get.
 */
export async function sweepExpiredUploads(
  store: { db: Db; media: R2Bucket },
  now: number = Date.now(),
): Promise<number> {
  const rows = await expiredUploads(store.db, now, BATCH);
  const aborted = await forEachVideo(
    rows,
    async (row) => {
      if (row.upload_r2_id) await abortMultipartUpload(store.media, row.source_key, row.upload_r2_id);
    },
    "expired upload: abort",
  );
  await clearExpiredUploads(store.db, aborted);
  return aborted.length;
}
