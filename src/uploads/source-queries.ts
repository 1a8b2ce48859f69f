import { type Db, IN_JSON_LIST } from "../lib/db";
import { modeParam, type Tenant } from "../lib/tenant";
import { isoTime } from "../lib/time";
import { COMPLETION_LEASE_MS, type VideoRow } from "../videos/model";

// A video's source upload as its row and `upload_parts` keep it: the parts the part API recorded,
// the completion lease both kinds of upload end under, and the sessions that expired unfinished.

/**
 * Takes the completion lease of a video waiting for its upload (or whose earlier completion died).
 * Returns the row as it is now under the lease, or null when the lease could not be taken.
 */
export function acquireCompletionLease(db: Db, tenant: Tenant, id: string, now: number): Promise<VideoRow | null> {
  return db
    .prepare(
      `UPDATE videos SET status = 'upload_completing', completion_lease_until = ?1, updated_at = ?2
       WHERE id = ?3 AND project_id = ?4 AND livemode = coalesce(?5, livemode) AND deleted_at IS NULL
         AND upload_r2_id IS NOT NULL AND upload_expires_at > ?2
         AND (status = 'waiting_for_upload' OR (status = 'upload_completing' AND completion_lease_until <= ?2))
       RETURNING *`,
    )
    .bind(isoTime(now + COMPLETION_LEASE_MS), isoTime(now), id, tenant.projectId, modeParam(tenant))
    .first<VideoRow>();
}

/**
 * Marks the tenant's upload complete with these parts (`completedParts`, canonical), if this
 * completion still holds the lease.
 */
export function finishCompletion(
  db: Db,
  tenant: Tenant,
  id: string,
  lease: string,
  completedParts: string,
  now: number,
): Promise<VideoRow | null> {
  return finishCompletionStatement(db, tenant, id, lease, completedParts, now).first<VideoRow>();
}

/** `finishCompletion`'s statement, for a batch that takes the lease in the same transaction (an import's). */
export function finishCompletionStatement(
  db: Db,
  tenant: Tenant,
  id: string,
  lease: string,
  completedParts: string,
  now: number,
): D1PreparedStatement {
  return db
    .prepare(
      `UPDATE videos SET status = 'uploaded', completion_lease_until = NULL, upload_id = NULL, upload_r2_id = NULL,
         upload_expires_at = NULL, updated_at = ?1, completed_parts = ?4
       WHERE id = ?2 AND project_id = ?5 AND livemode = coalesce(?6, livemode)
         AND status = 'upload_completing' AND completion_lease_until = ?3
       RETURNING *`,
    )
    .bind(isoTime(now), id, lease, completedParts, tenant.projectId, modeParam(tenant));
}

/** Gives the lease back after a failed completion, so the client can try again at once. */
export async function releaseCompletionLease(
  db: Db,
  tenant: Tenant,
  id: string,
  lease: string,
  now: number,
): Promise<void> {
  await db
    .prepare(
      `UPDATE videos SET status = 'waiting_for_upload', completion_lease_until = NULL, updated_at = ?1
       WHERE id = ?2 AND project_id = ?4 AND livemode = coalesce(?5, livemode)
         AND status = 'upload_completing' AND completion_lease_until = ?3`,
    )
    .bind(isoTime(now), id, lease, tenant.projectId, modeParam(tenant))
    .run();
}

/**
 * Live videos whose upload session expired with its R2 multipart upload still open, oldest first;
 * a completion still under its lease is left alone.
 *
 * @allModes the sweep aborts every expired upload session, in both modes
 */
export async function expiredUploads(db: Db, now: number, limit: number): Promise<VideoRow[]> {
  const { results } = await db
    .prepare(
      `SELECT * FROM videos
       WHERE upload_r2_id IS NOT NULL AND deleted_at IS NULL AND upload_expires_at <= ?1
         AND NOT (status = 'upload_completing' AND completion_lease_until > ?1)
       ORDER BY upload_expires_at LIMIT ?2`,
    )
    .bind(isoTime(now), limit)
    .all<VideoRow>();
  return results;
}

/**
 * Forgets the aborted R2 uploads of these expired sessions (unless something changed them since).
 *
 * @allModes the sweep aborts every expired upload session, in both modes
 */
export async function clearExpiredUploads(db: Db, rows: VideoRow[]): Promise<void> {
  if (rows.length === 0) return;
  await db
    .prepare(
      `UPDATE videos SET upload_r2_id = NULL
       WHERE (id, upload_r2_id) IN (SELECT key, value FROM json_each(?1))
         AND deleted_at IS NULL AND status != 'uploaded'`,
    )
    .bind(JSON.stringify(Object.fromEntries(rows.map((row) => [row.id, row.upload_r2_id]))))
    .run();
}

/** A part of a video's upload as stored in R2: its size and its etag. */
export type StoredPart = { part_number: number; size: number; etag: string };

/** Records a part R2 stored (a part uploaded again replaces the record, as R2 replaces the part). */
export async function recordPart(
  db: Db,
  projectId: string,
  videoId: string,
  part: { partNumber: number; size: number; etag: string },
  now: number,
): Promise<void> {
  await db
    .prepare(
      `INSERT OR REPLACE INTO upload_parts (project_id, video_id, part_number, size, etag, uploaded_at)
       VALUES (?, ?, ?, ?, ?, ?)`,
    )
    .bind(projectId, videoId, part.partNumber, part.size, part.etag, isoTime(now))
    .run();
}

/** The recorded parts of a video's upload among `partNumbers`. */
export async function storedParts(
  db: Db,
  projectId: string,
  videoId: string,
  partNumbers: number[],
): Promise<Map<number, StoredPart>> {
  const { results } = await db
    .prepare(
      `SELECT part_number, size, etag FROM upload_parts
       WHERE project_id = ? AND video_id = ? AND part_number IN (${IN_JSON_LIST})`,
    )
    .bind(projectId, videoId, JSON.stringify(partNumbers))
    .all<StoredPart>();
  return new Map(results.map((part) => [part.part_number, part]));
}
