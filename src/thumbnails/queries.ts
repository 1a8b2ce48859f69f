import type { Db } from "../lib/db";
import { changingPlayback } from "../lib/playback-cache";
import { type Swapped, swapInBatch } from "../lib/replace-object";
import { modeParam, type Tenant } from "../lib/tenant";
import { isoTime } from "../lib/time";
import type { VideoRow, Visibility } from "../videos/model";
import { liveVideoCondition } from "../videos/queries";

/**
 * The visibility of a live video of a live project, or null when the video is unknown, deleted,
 * or its project deleted: what a public thumbnail URL must know before it serves anything.
 *
 * @allModes a public thumbnail URL names its video by id and is its own credential: the same in both modes
 */
export async function thumbnailVisibility(db: Db, projectId: string, videoId: string): Promise<Visibility | null> {
  const row = await db
    .prepare(`SELECT v.visibility FROM videos v WHERE v.id = ? AND v.project_id = ? AND ${liveVideoCondition("v")}`)
    .bind(videoId, projectId)
    .first<{ visibility: Visibility }>();
  return row?.visibility ?? null;
}

/**
 * Points a live video at a new custom thumbnail (or none), reading the key it replaces in the same
 * batch, so the replaced object is known exactly. Null when the video is not there.
 */
export function swapCustomThumbnail(
  db: Db,
  tenant: Tenant,
  id: string,
  next: string | null,
  now: number,
): Promise<Swapped<VideoRow> | null> {
  const where = "id = ?1 AND project_id = ?2 AND livemode = coalesce(?3, livemode) AND deleted_at IS NULL";
  const mode = modeParam(tenant);
  // `/play/<x>/thumbnail` and the embed page's poster change with it.
  return changingPlayback(
    swapInBatch<VideoRow>(
      db,
      db.prepare(`SELECT custom_thumbnail_key AS replaced FROM videos WHERE ${where}`).bind(id, tenant.projectId, mode),
      db
        .prepare(
          `UPDATE videos SET custom_thumbnail_key = ?4,
             updated_at = CASE WHEN custom_thumbnail_key IS ?4 THEN updated_at ELSE ?5 END
           WHERE ${where} RETURNING *`,
        )
        .bind(id, tenant.projectId, mode, next, isoTime(now)),
    ),
    (swapped) => (swapped ? [id] : null),
  );
}
