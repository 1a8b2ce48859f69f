import { type Db, IN_JSON_LIST } from "../lib/db";
import { isoTime } from "../lib/time";
import type { VideoRow } from "./model";

// The bookkeeping of deleted videos' clean-up: which still leave something in R2, and forgetting
// those that no longer do.

/**
 * Forgets the R2 uploads and objects (and the rows that pointed at them) of deleted videos that
 * have been cleaned up.
 *
 * @allModes the clean-up of deleted videos (the deletions queue, the sweep) names them by id, in both modes
 */
export async function clearCleanedUp(db: Db, ids: string[]): Promise<void> {
  if (ids.length === 0) return;
  const list = JSON.stringify(ids);
  await db.batch([
    db
      .prepare(
        `UPDATE videos SET upload_r2_id = NULL, custom_thumbnail_key = NULL, storage_cleared_at = ?
         WHERE deleted_at IS NOT NULL AND id IN (${IN_JSON_LIST})`,
      )
      .bind(isoTime(Date.now()), list),
    db
      .prepare(
        `DELETE FROM upload_parts WHERE video_id IN (
           SELECT id FROM videos WHERE deleted_at IS NOT NULL AND id IN (${IN_JSON_LIST}))`,
      )
      .bind(list),
    // Caption tracks (src/captions/): their objects were under the prefix just removed.
    db
      .prepare(
        `DELETE FROM captions WHERE video_id IN (
           SELECT id FROM videos WHERE deleted_at IS NOT NULL AND id IN (${IN_JSON_LIST}))`,
      )
      .bind(list),
  ]);
}

/** A deleted video whose R2 clean-up is not done: an upload to abort, or objects under its prefix. */
const HAS_LEFTOVERS = "deleted_at IS NOT NULL AND storage_cleared_at IS NULL";

/**
 * These videos, where deleted and not cleaned up yet.
 *
 * @allModes the clean-up of deleted videos (the deletions queue) names them by id, in both modes
 */
export async function deletedWithLeftovers(db: Db, ids: string[]): Promise<VideoRow[]> {
  const { results } = await db
    .prepare(
      `SELECT * FROM videos
       WHERE id IN (${IN_JSON_LIST}) AND ${HAS_LEFTOVERS}`,
    )
    .bind(JSON.stringify(ids))
    .all<VideoRow>();
  return results;
}

/**
 * Deleted videos not cleaned up yet, oldest first.
 *
 * @allModes the sweep finishes every deleted video's clean-up, in both modes
 */
export async function pendingCleanups(db: Db, limit: number): Promise<VideoRow[]> {
  const { results } = await db
    .prepare(`SELECT * FROM videos WHERE ${HAS_LEFTOVERS} ORDER BY deleted_at LIMIT ?`)
    .bind(limit)
    .all<VideoRow>();
  return results;
}
