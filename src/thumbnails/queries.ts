import type { Db } from "../lib/db";
import type { Visibility } from "../videos/model";

/**
 * The visibility of a live video of a live project, or null when the video is unknown, deleted,
 * or its project deleted: what a public thumbnail URL must know before it serves anything.
 *
 * @allModes a public thumbnail URL names its video by id and is its own credential: the same in both modes
 */
export async function thumbnailVisibility(db: Db, projectId: string, videoId: string): Promise<Visibility | null> {
  const row = await db
    .prepare(
      `SELECT v.visibility FROM videos v JOIN projects p ON p.id = v.project_id
       WHERE v.id = ? AND v.project_id = ? AND v.deleted_at IS NULL AND p.deleted_at IS NULL`,
    )
    .bind(videoId, projectId)
    .first<{ visibility: Visibility }>();
  return row?.visibility ?? null;
}
