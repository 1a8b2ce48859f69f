import type { Db } from "../lib/db";
import { sourceKey } from "../lib/storage-keys";
import { creationMode, type Tenant } from "../lib/tenant";
import { ulid } from "../lib/ulid";
import type { VideoRow } from "./model";
import { newVideoRow, type VideoChoices } from "./new-rows";
import { insertVideoStatement } from "./queries";

/** What a caller chooses of a new video with its upload; the rest (ids, keys, its mode) follows from the tenant. */
export type VideoWithUpload = VideoChoices & {
  /** When the upload session ends (epoch ms). */
  expiresAt: number;
  /** A tus direct upload: its id is the upload's, and the video's row records it. */
  tus: boolean;
};

/**
 * Creates a video with its upload session, the one way both `POST /v1/videos` and `POST
 * /v1/uploads` do: the source's R2 multipart upload first, then the video's row, in one batch with
 * the statements `alongside` gives for it (the tus upload's row). When the row is not recorded the
 * multipart upload is aborted, so no upload is left behind a video that does not exist.
 */
export async function createVideoWithUpload(
  media: R2Bucket,
  db: Db,
  tenant: Tenant,
  video: VideoWithUpload,
  now: number,
  alongside: (row: VideoRow) => D1PreparedStatement[] = () => [],
): Promise<VideoRow> {
  const id = ulid(now);
  const uploadId = ulid(now);
  const key = sourceKey(tenant.projectId, id);
  const multipart = await media.createMultipartUpload(key);
  const { expiresAt, tus, ...choices } = video;
  const row = newVideoRow({
    ...choices,
    id,
    projectId: tenant.projectId,
    mode: creationMode(tenant),
    sourceKey: key,
    uploadId,
    r2UploadId: multipart.uploadId,
    expiresAt,
    tusUploadId: tus ? uploadId : null,
    now,
  });
  try {
    const insert = insertVideoStatement(db, row);
    const more = alongside(row);
    if (more.length === 0) await insert.run();
    else await db.batch([insert, ...more]);
  } catch (error) {
    // Leave no orphaned multipart upload behind a video that was never recorded.
    await multipart.abort().catch(() => {});
    throw error;
  }
  return row;
}
