import { type Db, IN_JSON_LIST } from "../lib/db";
import { isoTime } from "../lib/time";
import type { VideoRow } from "./model";

// The bookkeeping of deleted videos' clean-up: which still leave something in R2, and forgetting
// those that no longer do.

/**
 * A deleted video waiting for its clean-up, and whether a clip not cleaned up yet reads its source
 * (docs/import-clips-search.md#clips-as-videos-clipof: a clip outlives the video it was cut from),
 * which its clean-up then keeps.
 */
export type PendingCleanup = VideoRow & { clips_pending: number };

const CLIPS_PENDING = `(videos.clip_of IS NULL AND EXISTS (
  SELECT 1 FROM videos AS clip
  WHERE clip.source_key = videos.source_key AND clip.clip_of IS NOT NULL AND clip.storage_cleared_at IS NULL
)) AS clips_pending`;

/**
 * Of the sources `?1` (JSON `[{ key, owner }]`: a cleaned-up video's source and the video it was
 * uploaded to), those clips shared that nothing needs any more: neither their owner nor any clip of
 * them is waiting for its clean-up. An unshared source went with its video's prefix.
 */
const RELEASABLE_SOURCES = `SELECT DISTINCT s.value ->> '$.key' AS key FROM json_each(?1) AS s
  WHERE EXISTS (SELECT 1 FROM videos WHERE source_key = s.value ->> '$.key' AND clip_of IS NOT NULL)
    AND NOT EXISTS (SELECT 1 FROM videos WHERE id = s.value ->> '$.owner' AND storage_cleared_at IS NULL)
    AND NOT EXISTS (SELECT 1 FROM videos WHERE source_key = s.value ->> '$.key' AND clip_of IS NOT NULL
                      AND storage_cleared_at IS NULL)`;

/**
 * Forgets the R2 uploads and objects (and the rows that pointed at them, and their chapters) of
 * deleted videos that have been cleaned up, and answers, in the same transaction, which shared sources of theirs
 * nothing needs any more: the caller removes those. Recorded clean before the look, so of a video
 * and its clip cleaned up at once, one of them sees the other clean.
 *
 * @allModes the clean-up of deleted videos (the deletions queue, the sweep) names them by id, in both modes
 */
export async function clearCleanedUp(
  db: Db,
  rows: Pick<VideoRow, "id" | "source_key" | "clip_of">[],
): Promise<string[]> {
  if (rows.length === 0) return [];
  const list = JSON.stringify(rows.map((row) => row.id));
  const sources = JSON.stringify(rows.map((row) => ({ key: row.source_key, owner: row.clip_of ?? row.id })));
  const results = await db.batch([
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
    // The parts of audio tracks' files being fetched (under their generations, src/imports/).
    db
      .prepare(
        `DELETE FROM upload_parts WHERE video_id IN (SELECT generation FROM audio_tracks WHERE video_id IN (
           SELECT id FROM videos WHERE deleted_at IS NOT NULL AND id IN (${IN_JSON_LIST})))`,
      )
      .bind(list),
    // Caption and audio tracks (src/captions/, src/audio-tracks/): their objects were under the
    // prefix just removed. Chapters (src/chapters/): rows only.
    ...["captions", "audio_tracks", "chapters"].map((table) =>
      db
        .prepare(
          `DELETE FROM ${table} WHERE video_id IN (
           SELECT id FROM videos WHERE deleted_at IS NOT NULL AND id IN (${IN_JSON_LIST}))`,
        )
        .bind(list),
    ),
    db.prepare(RELEASABLE_SOURCES).bind(sources),
  ]);
  return ((results.at(-1)?.results ?? []) as { key: string }[]).map((row) => row.key);
}

/** A deleted video whose R2 clean-up is not done: an upload to abort, or objects under its prefix. */
const HAS_LEFTOVERS = "deleted_at IS NOT NULL AND storage_cleared_at IS NULL";

/**
 * These videos, where deleted and not cleaned up yet.
 *
 * @allModes the clean-up of deleted videos (the deletions queue) names them by id, in both modes
 */
export async function deletedWithLeftovers(db: Db, ids: string[]): Promise<PendingCleanup[]> {
  const { results } = await db
    .prepare(
      `SELECT *, ${CLIPS_PENDING} FROM videos
       WHERE id IN (${IN_JSON_LIST}) AND ${HAS_LEFTOVERS}`,
    )
    .bind(JSON.stringify(ids))
    .all<PendingCleanup>();
  return results;
}

/**
 * Deleted videos not cleaned up yet, oldest first.
 *
 * @allModes the sweep finishes every deleted video's clean-up, in both modes
 */
export async function pendingCleanups(db: Db, limit: number): Promise<PendingCleanup[]> {
  const { results } = await db
    .prepare(`SELECT *, ${CLIPS_PENDING} FROM videos WHERE ${HAS_LEFTOVERS} ORDER BY deleted_at LIMIT ?`)
    .bind(limit)
    .all<PendingCleanup>();
  return results;
}
