import type { Db } from "../lib/db";
import { changingPlayback } from "../lib/playback-cache";
import { modeParam, type Tenant } from "../lib/tenant";
import { isoTime } from "../lib/time";
import type { VideoRow } from "../videos/model";
import { tenantVideoStatement } from "../videos/queries";
import { type Chapter, type ChaptersRow, type SavedChapters, savedChapters } from "./model";

/** A video's chapters (no row when it has none): to run in a batch with the read of the video. */
export function chaptersStatement(db: Db, videoId: string): D1PreparedStatement {
  return db.prepare("SELECT * FROM chapters WHERE video_id = ?").bind(videoId);
}

/** The tenant's live video `videoId` and its chapters, in one round trip; null when there is no such video. */
export async function readChapters(
  db: Db,
  tenant: Tenant,
  videoId: string,
): Promise<{ video: VideoRow; saved: SavedChapters | null } | null> {
  const [video, chapters] = await db.batch([tenantVideoStatement(db, tenant, videoId), chaptersStatement(db, videoId)]);
  const row = video?.results[0] as VideoRow | undefined;
  return row ? { video: row, saved: savedChapters(chapters?.results[0] as ChaptersRow | undefined) } : null;
}

/**
 * Saves `chapters` as the list of the tenant's live video `videoId`, replacing any, in one
 * statement: only while the video is live and, once its duration is known, starts below it with
 * its last chapter (the starts increase), so no deletion or probe comes between the check and the
 * write. The list saved, or null when nothing was written (no such video, or a chapter at or past
 * the duration: the video tells which).
 */
export async function saveChapters(
  db: Db,
  tenant: Tenant,
  videoId: string,
  chapters: Chapter[],
  now: number,
): Promise<SavedChapters | null> {
  // chapters.vtt and the embed page change with them.
  const write = db
    .prepare(
      `INSERT INTO chapters (video_id, project_id, chapters, updated_at)
       SELECT id, project_id, ?4, ?5 FROM videos
       WHERE id = ?1 AND project_id = ?2 AND livemode = coalesce(?3, livemode) AND deleted_at IS NULL
         AND (duration IS NULL OR duration > ?6)
       ON CONFLICT (video_id) DO UPDATE SET chapters = excluded.chapters, updated_at = excluded.updated_at
       RETURNING *`,
    )
    .bind(
      videoId,
      tenant.projectId,
      modeParam(tenant),
      JSON.stringify(chapters),
      isoTime(now),
      chapters.at(-1)?.start ?? 0,
    )
    .first<ChaptersRow>();
  return savedChapters(await changingPlayback(write, (row) => (row ? [videoId] : null)));
}

/**
 * Deletes the chapters of the tenant's live video `videoId`, in one round trip: whether there is
 * such a video (it had chapters or not).
 */
export async function deleteChapters(db: Db, tenant: Tenant, videoId: string): Promise<boolean> {
  const [video] = await changingPlayback(
    db.batch([
      tenantVideoStatement(db, tenant, videoId),
      db
        .prepare(
          `DELETE FROM chapters WHERE video_id = ?1 AND project_id = ?2
             AND EXISTS (SELECT 1 FROM videos WHERE id = ?1 AND project_id = ?2
               AND livemode = coalesce(?3, livemode) AND deleted_at IS NULL)`,
        )
        .bind(videoId, tenant.projectId, modeParam(tenant)),
    ]),
    ([found]) => (found?.results.length ? [videoId] : null),
  );
  return Boolean(video?.results.length);
}
