import type { Db } from "../lib/db";
import { isoTime } from "../lib/time";
import { recordEventsStatement } from "../outbox/queries";
import { finishCompletionStatement } from "../uploads/source-queries";
import type { VideoEncodingEvent } from "../videos/events";
import type { VideoRow } from "../videos/model";

// An import's statements (docs/imports.md). Every one names the video by its id for the imports
// queue's consumer or the sweep: system work with no caller, hence `@allModes`.

/** A run's hold on an importing video: the video and the lease it took. */
export type Held = { id: string; lease: string };

const LIVE_IMPORT = "status = 'importing' AND deleted_at IS NULL";

/**
 * Takes the video's import lease until `until`, if it is importing, not deleted, and no other run
 * holds it. The row as it is now under the lease, or null.
 *
 * @allModes the imports queue's consumer fetches a video by its id, whatever its mode
 */
export function takeLease(db: Db, id: string, now: number, until: number): Promise<VideoRow | null> {
  return db
    .prepare(
      `UPDATE videos SET import_lease_until = ?1
       WHERE id = ?2 AND ${LIVE_IMPORT} AND (import_lease_until IS NULL OR import_lease_until < ?3)
       RETURNING *`,
    )
    .bind(isoTime(until), id, isoTime(now))
    .first<VideoRow>();
}

/** The condition that the run still holds its lease (the video importing, not deleted). */
const HELD = `id = ? AND ${LIVE_IMPORT} AND import_lease_until = ?`;

/**
 * Records the R2 multipart upload opened for the video (its deletion clean-up aborts it). False when
 * the lease was lost.
 *
 * @allModes the imports queue's consumer fetches a video by its id, whatever its mode
 */
export async function recordMultipart(db: Db, held: Held, r2UploadId: string): Promise<boolean> {
  const result = await db
    .prepare(`UPDATE videos SET upload_r2_id = ? WHERE ${HELD}`)
    .bind(r2UploadId, held.id, held.lease)
    .run();
  return result.meta.changes > 0;
}

/**
 * Starts the file again from its first byte (the first answer, or one that ignored `Range`): forgets
 * the parts stored so far and keeps this answer's validator. False when the lease was lost.
 *
 * @allModes the imports queue's consumer fetches a video by its id, whatever its mode
 */
export async function restartFile(db: Db, held: Held, projectId: string, validator: string | null): Promise<boolean> {
  const [, updated] = await db.batch([
    db.prepare("DELETE FROM upload_parts WHERE project_id = ? AND video_id = ?").bind(projectId, held.id),
    db.prepare(`UPDATE videos SET import_validator = ? WHERE ${HELD}`).bind(validator, held.id, held.lease),
  ]);
  return (updated?.meta.changes ?? 0) > 0;
}

export type ImportPart = { partNumber: number; size: number; etag: string };

/**
 * The parts stored so far, in order (the part API's table, `upload_parts`).
 *
 * @allModes the imports queue's consumer fetches a video by its id, whatever its mode
 */
export async function storedParts(db: Db, projectId: string, videoId: string): Promise<ImportPart[]> {
  const { results } = await db
    .prepare(
      `SELECT part_number AS partNumber, size, etag FROM upload_parts
       WHERE project_id = ? AND video_id = ? ORDER BY part_number`,
    )
    .bind(projectId, videoId)
    .all<ImportPart>();
  return results;
}

/**
 * Records a part R2 stored and renews the lease until `until`, both only while the run holds it.
 * False when the lease was lost (the video deleted, finished, or taken over): the run stops.
 *
 * @allModes the imports queue's consumer fetches a video by its id, whatever its mode
 */
export async function recordPart(
  db: Db,
  held: Held,
  projectId: string,
  part: ImportPart,
  now: number,
  until: number,
): Promise<{ held: boolean; lease: string }> {
  const lease = isoTime(until);
  const [recorded] = await db.batch([
    db
      .prepare(
        `INSERT OR REPLACE INTO upload_parts (project_id, video_id, part_number, size, etag, uploaded_at)
         SELECT ?, ?, ?, ?, ?, ? WHERE EXISTS (SELECT 1 FROM videos WHERE ${HELD})`,
      )
      .bind(projectId, held.id, part.partNumber, part.size, part.etag, isoTime(now), held.id, held.lease),
    renewLeaseStatement(db, held, lease),
  ]);
  return { held: (recorded?.meta.changes ?? 0) > 0, lease };
}

/**
 * Moves the run's lease on to `lease`, only while the run holds it.
 *
 * @allModes the imports queue's consumer fetches a video by its id, whatever its mode
 */
function renewLeaseStatement(db: Db, held: Held, lease: string): D1PreparedStatement {
  return db.prepare(`UPDATE videos SET import_lease_until = ? WHERE ${HELD}`).bind(lease, held.id, held.lease);
}

/**
 * Renews the run's lease until `until` while it stores no part (an origin sending slowly). False
 * when the lease was lost (the video deleted, finished, or taken over): the run stops.
 *
 * @allModes the imports queue's consumer fetches a video by its id, whatever its mode
 */
export async function renewLease(db: Db, held: Held, until: number): Promise<{ held: boolean; lease: string }> {
  const lease = isoTime(until);
  const result = await renewLeaseStatement(db, held, lease).run();
  return { held: result.meta.changes > 0, lease };
}

/**
 * Counts a transient failure. The failures so far, or null when the lease was lost.
 *
 * @allModes the imports queue's consumer fetches a video by its id, whatever its mode
 */
export async function countFailure(db: Db, held: Held): Promise<number | null> {
  const row = await db
    .prepare(`UPDATE videos SET import_failures = import_failures + 1 WHERE ${HELD} RETURNING import_failures`)
    .bind(held.id, held.lease)
    .first<{ import_failures: number }>();
  return row?.import_failures ?? null;
}

/**
 * Gives the lease back (a slice over, a transient failure), so the next run may take it at once:
 * it ends a millisecond before `now`, as a run that starts within the same millisecond must see it
 * run out.
 *
 * @allModes the imports queue's consumer fetches a video by its id, whatever its mode
 */
export async function releaseLease(db: Db, held: Held, now: number): Promise<void> {
  await renewLeaseStatement(db, held, isoTime(now - 1)).run();
}

/**
 * The fetched video's source is whole in R2: it becomes `uploaded` by the rule every upload ends
 * with (`finishCompletionStatement`, src/uploads/source-queries.ts), from `upload_completing` under
 * a completion lease that this same batch takes from the run's import lease, so no crash can leave
 * it between the two. The row as uploaded, or null when the lease was lost.
 *
 * @allModes the imports queue's consumer fetches a video by its id, whatever its mode
 */
export async function markImported(
  db: Db,
  held: Held,
  projectId: string,
  completedParts: string,
  now: number,
  until: number,
): Promise<VideoRow | null> {
  const lease = isoTime(until);
  const [, uploaded] = await db.batch([
    db
      .prepare(
        `UPDATE videos SET status = 'upload_completing', completion_lease_until = ?, import_lease_until = NULL
         WHERE ${HELD}`,
      )
      .bind(lease, held.id, held.lease),
    finishCompletionStatement(db, { projectId, mode: "both" }, held.id, lease, completedParts, now),
  ]);
  return (uploaded?.results[0] as VideoRow | undefined) ?? null;
}

/**
 * Fails an import: `errored`, `import_failed`, `message`, with its `video.errored` event recorded
 * in the outbox in the same batch (as an encoding failure records it). Under the run's lease
 * (`lease`), or, for the dead-letter queue (`lease` null), when no run holds it now. The row as
 * failed, or null when it was not (the lease lost, the video deleted or finished).
 *
 * @allModes the imports queue's consumer fetches a video by its id, whatever its mode
 */
export async function failImportRow(
  db: Db,
  row: VideoRow,
  lease: string | null,
  message: string,
  at: string,
  event: { id: string; event: VideoEncodingEvent },
): Promise<VideoRow | null> {
  const [updated] = await db.batch([
    db
      .prepare(
        `UPDATE videos SET status = 'errored', error_code = 'import_failed', error_message = ?1,
           import_lease_until = NULL, updated_at = ?2
         WHERE id = ?3 AND ${LIVE_IMPORT}
           AND (import_lease_until = ?4 OR (?4 IS NULL AND (import_lease_until IS NULL OR import_lease_until < ?2)))
         RETURNING *`,
      )
      .bind(message, at, row.id, lease),
    recordEventsStatement(
      db,
      row.project_id,
      [{ id: event.id, type: event.event.type, subjectId: row.id, payload: event.event }],
      at,
      { sql: "SELECT id FROM videos WHERE id = ? AND status = 'errored' AND updated_at = ?", params: [row.id, at] },
    ),
  ]);
  return (updated?.results[0] as VideoRow | undefined) ?? null;
}

/**
 * The live importing video, as it is now.
 *
 * @allModes the imports queue's consumer fetches a video by its id, whatever its mode
 */
export function importingVideo(db: Db, id: string): Promise<VideoRow | null> {
  return db.prepare(`SELECT * FROM videos WHERE id = ? AND ${LIVE_IMPORT}`).bind(id).first<VideoRow>();
}

/**
 * Imports no run is working on: never started (their message lost) or whose lease ran out this
 * long ago without a run taking it, oldest first.
 *
 * @allModes the sweep looks after every import, in both modes
 */
export async function lostImports(
  db: Db,
  before: number,
  limit: number,
): Promise<Pick<VideoRow, "id" | "project_id">[]> {
  const { results } = await db
    .prepare(
      `SELECT id, project_id FROM videos
       WHERE ${LIVE_IMPORT} AND (import_lease_until < ?1 OR (import_lease_until IS NULL AND created_at < ?1))
       ORDER BY import_lease_until LIMIT ?2`,
    )
    .bind(isoTime(before), limit)
    .all<Pick<VideoRow, "id" | "project_id">>();
  return results;
}
