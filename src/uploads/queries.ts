import type { Db } from "../lib/db";
import { modeParam, type Tenant } from "../lib/tenant";
import { UPLOADED_OR_LATER } from "../videos/model";
import { liveVideoCondition } from "../videos/queries";

/** A direct upload as POST /v1/uploads minted it (table `tus_uploads`). */
export type TusUploadRow = {
  id: string;
  project_id: string;
  /** 1 live, 0 test: its video's mode (docs/api-guide.md#test-mode-and-going-live). */
  livemode: number;
  video_id: string;
  cors_origin: string;
  max_size_bytes: number;
  expires_at: string;
  created_at: string;
};

export function insertTusUploadStatement(db: Db, row: TusUploadRow): D1PreparedStatement {
  return db
    .prepare(
      `INSERT INTO tus_uploads (id, project_id, livemode, video_id, cors_origin, max_size_bytes, expires_at, created_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
    )
    .bind(
      row.id,
      row.project_id,
      row.livemode,
      row.video_id,
      row.cors_origin,
      row.max_size_bytes,
      row.expires_at,
      row.created_at,
    );
}

const UPLOADED_LIST = UPLOADED_OR_LATER.map((status) => `'${status}'`).join(", ");

/** The tenant's upload, with whether its video is deleted and whether it is uploaded (or later). */
export function findTusUpload(
  db: Db,
  tenant: Tenant,
  id: string,
): Promise<(TusUploadRow & { video_deleted: number; video_uploaded: number }) | null> {
  return db
    .prepare(
      `SELECT u.*, v.deleted_at IS NOT NULL AS video_deleted, v.status IN (${UPLOADED_LIST}) AS video_uploaded
       FROM tus_uploads u JOIN videos v ON v.id = u.video_id
       WHERE u.id = ? AND u.project_id = ? AND u.livemode = coalesce(?, u.livemode)`,
    )
    .bind(id, tenant.projectId, modeParam(tenant))
    .first();
}

/**
 * Whether the upload's video is still there to upload to: neither it nor its project deleted. The
 * upload's object asks before every request, so a delete (of the video or its project) closes the
 * URL at once, whichever way it was made.
 *
 * @allModes a tus upload URL is the credential for its one video, whatever the video's mode
 */
export async function videoIsLive(db: Db, projectId: string, videoId: string): Promise<boolean> {
  const row = await db
    .prepare(`SELECT 1 AS live FROM videos v WHERE v.id = ? AND v.project_id = ? AND ${liveVideoCondition("v")}`)
    .bind(videoId, projectId)
    .first<{ live: number }>();
  return row !== null;
}
