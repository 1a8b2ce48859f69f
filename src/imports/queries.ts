import type { AudioTrackRow } from "../audio-tracks/model";
import type { Db } from "../lib/db";
import { isoTime } from "../lib/time";
import { recordEventsStatement } from "../outbox/queries";
import { finishCompletionStatement } from "../uploads/source-queries";
import type { VideoEncodingEvent } from "../videos/events";
import type { VideoRow } from "../videos/model";

// An import's statements (docs/imports.md). Every one names what it fetches into by its id, for the
// import's object or the sweep: system work with no caller, hence `@allModes`.

/**
 * Where an import keeps its state (its URL, the origin's validator, its run's lease, its transient
 * failures, its R2 multipart upload): a video's row, for its own source, or an added audio track's
 * (docs/audio-tracks.md), for the track's file; by the column that names it (its parts are in
 * `upload_parts` under that name), and the condition that it is still being fetched.
 */
export type ImportTable = { table: "videos" | "audio_tracks"; id: "id" | "generation"; fetching: string };

export const VIDEO_IMPORTS: ImportTable = {
  table: "videos",
  id: "id",
  fetching: "status = 'importing' AND deleted_at IS NULL",
};

export const TRACK_IMPORTS: ImportTable = {
  table: "audio_tracks",
  id: "generation",
  fetching: `status = 'processing' AND import_url IS NOT NULL
    AND EXISTS (SELECT 1 FROM videos WHERE videos.id = audio_tracks.video_id AND videos.deleted_at IS NULL)`,
};

/** What every import keeps, on a video's row or an audio track's. */
export type ImportRow = {
  project_id: string;
  source_key: string;
  import_url: string | null;
  import_validator: string | null;
  import_lease_until: string | null;
  upload_r2_id: string | null;
};

/** A run's hold on an import: what it fetches into (by its id) and the lease it took. */
export type Held = { id: string; lease: string };

const LIVE_IMPORT = VIDEO_IMPORTS.fetching;

/**
 * Takes the import's lease until `until`, if it is being fetched and no other run holds it. The row
 * as it is now under the lease, or null.
 *
 * @allModes the import's object fetches by id, whatever the mode
 */
export function takeLease<Row extends ImportRow>(
  db: Db,
  on: ImportTable,
  id: string,
  now: number,
  until: number,
): Promise<Row | null> {
  return db
    .prepare(
      `UPDATE ${on.table} SET import_lease_until = ?1
       WHERE ${on.id} = ?2 AND ${on.fetching} AND (import_lease_until IS NULL OR import_lease_until < ?3)
       RETURNING *`,
    )
    .bind(isoTime(until), id, isoTime(now))
    .first<Row>();
}

/** The condition that the run still holds its lease (and the import is still being fetched). */
function held(on: ImportTable): string {
  return `${on.id} = ? AND ${on.fetching} AND import_lease_until = ?`;
}

/**
 * Records the R2 multipart upload opened for the import (a video's deletion clean-up aborts it).
 * False when the lease was lost.
 *
 * @allModes the import's object fetches by id, whatever the mode
 */
export async function recordMultipart(db: Db, on: ImportTable, hold: Held, r2UploadId: string): Promise<boolean> {
  const result = await db
    .prepare(`UPDATE ${on.table} SET upload_r2_id = ? WHERE ${held(on)}`)
    .bind(r2UploadId, hold.id, hold.lease)
    .run();
  return result.meta.changes > 0;
}

/**
 * Starts the file again from its first byte (the first answer, or one that ignored `Range`): forgets
 * the parts stored so far and keeps this answer's validator. False when the lease was lost.
 *
 * @allModes the import's object fetches by id, whatever the mode
 */
export async function restartFile(
  db: Db,
  on: ImportTable,
  hold: Held,
  projectId: string,
  validator: string | null,
): Promise<boolean> {
  const [, updated] = await db.batch([
    db.prepare("DELETE FROM upload_parts WHERE project_id = ? AND video_id = ?").bind(projectId, hold.id),
    db.prepare(`UPDATE ${on.table} SET import_validator = ? WHERE ${held(on)}`).bind(validator, hold.id, hold.lease),
  ]);
  return (updated?.meta.changes ?? 0) > 0;
}

export type ImportPart = { partNumber: number; size: number; etag: string };

/**
 * The parts stored so far, in order (the part API's table, `upload_parts`, under the import's id).
 *
 * @allModes the import's object fetches by id, whatever the mode
 */
export async function storedParts(db: Db, projectId: string, id: string): Promise<ImportPart[]> {
  const { results } = await db
    .prepare(
      `SELECT part_number AS partNumber, size, etag FROM upload_parts
       WHERE project_id = ? AND video_id = ? ORDER BY part_number`,
    )
    .bind(projectId, id)
    .all<ImportPart>();
  return results;
}

/**
 * Records a part R2 stored and renews the lease until `until`, both only while the run holds it.
 * False when the lease was lost (the import deleted, finished, or taken over): the run stops.
 *
 * @allModes the import's object fetches by id, whatever the mode
 */
export async function recordPart(
  db: Db,
  on: ImportTable,
  hold: Held,
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
         SELECT ?, ?, ?, ?, ?, ? WHERE EXISTS (SELECT 1 FROM ${on.table} WHERE ${held(on)})`,
      )
      .bind(projectId, hold.id, part.partNumber, part.size, part.etag, isoTime(now), hold.id, hold.lease),
    renewLeaseStatement(db, on, hold, lease),
  ]);
  return { held: (recorded?.meta.changes ?? 0) > 0, lease };
}

/**
 * Moves the run's lease on to `lease`, only while the run holds it.
 *
 * @allModes the import's object fetches by id, whatever the mode
 */
function renewLeaseStatement(db: Db, on: ImportTable, hold: Held, lease: string): D1PreparedStatement {
  return db.prepare(`UPDATE ${on.table} SET import_lease_until = ? WHERE ${held(on)}`).bind(lease, hold.id, hold.lease);
}

/**
 * Renews the run's lease until `until` while it stores no part (an origin sending slowly). False
 * when the lease was lost (the import deleted, finished, or taken over): the run stops.
 *
 * @allModes the import's object fetches by id, whatever the mode
 */
export async function renewLease(
  db: Db,
  on: ImportTable,
  hold: Held,
  until: number,
): Promise<{ held: boolean; lease: string }> {
  const lease = isoTime(until);
  const result = await renewLeaseStatement(db, on, hold, lease).run();
  return { held: result.meta.changes > 0, lease };
}

/**
 * Counts a transient failure. The failures so far, or null when the lease was lost.
 *
 * @allModes the import's object fetches by id, whatever the mode
 */
export async function countFailure(db: Db, on: ImportTable, hold: Held): Promise<number | null> {
  const row = await db
    .prepare(`UPDATE ${on.table} SET import_failures = import_failures + 1 WHERE ${held(on)} RETURNING import_failures`)
    .bind(hold.id, hold.lease)
    .first<{ import_failures: number }>();
  return row?.import_failures ?? null;
}

/**
 * Gives the lease back (a slice over, a transient failure), so the next run may take it at once:
 * it ends a millisecond before `now`, as a run that starts within the same millisecond must see it
 * run out.
 *
 * @allModes the import's object fetches by id, whatever the mode
 */
export async function releaseLease(db: Db, on: ImportTable, hold: Held, now: number): Promise<void> {
  await renewLeaseStatement(db, on, hold, isoTime(now - 1)).run();
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
  hold: Held,
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
         WHERE ${held(VIDEO_IMPORTS)}`,
      )
      .bind(lease, hold.id, hold.lease),
    finishCompletionStatement(db, { projectId, mode: "both" }, hold.id, lease, completedParts, now),
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

/**
 * An added audio track's file is whole in R2 (docs/audio-tracks.md): its fetch is over (no URL, no
 * lease, no multipart upload any more) and its parts are forgotten; the track stays `processing`,
 * for its video's coordinator to make. The track as it is now, or null when the lease was lost (put
 * again, deleted, its video deleted).
 *
 * @allModes the import's object fetches by id, whatever the mode
 */
export async function markTrackFetched(
  db: Db,
  hold: Held,
  projectId: string,
  now: number,
): Promise<AudioTrackRow | null> {
  const [fetched] = await db.batch([
    db
      .prepare(
        `UPDATE audio_tracks SET import_url = NULL, import_lease_until = NULL, upload_r2_id = NULL, updated_at = ?
         WHERE ${held(TRACK_IMPORTS)}
         RETURNING *`,
      )
      .bind(isoTime(now), hold.id, hold.lease),
    db.prepare("DELETE FROM upload_parts WHERE project_id = ? AND video_id = ?").bind(projectId, hold.id),
  ]);
  return (fetched?.results[0] as AudioTrackRow | undefined) ?? null;
}

/**
 * Fails the fetch of an added audio track's file: the track `errored`, `import_failed`, `message`.
 * Under the run's lease (`lease`), or, when the import is given up (`lease` null), when no run holds
 * it now. False when it was not (the lease lost, the track put again or deleted).
 *
 * @allModes the import's object fetches by id, whatever the mode
 */
export async function failTrackImport(
  db: Db,
  generation: string,
  lease: string | null,
  message: string,
  now: number,
): Promise<boolean> {
  const at = isoTime(now);
  const failed = await db
    .prepare(
      `UPDATE audio_tracks SET status = 'errored', error_code = 'import_failed', error_message = ?1,
         import_lease_until = NULL, updated_at = ?2
       WHERE generation = ?3 AND ${TRACK_IMPORTS.fetching}
         AND (import_lease_until = ?4 OR (?4 IS NULL AND (import_lease_until IS NULL OR import_lease_until < ?2)))
       RETURNING generation`,
    )
    .bind(message, at, generation, lease)
    .first();
  return failed !== null;
}

/**
 * The added audio track of this generation while its file is being fetched, as it is now.
 *
 * @allModes the import's object fetches by id, whatever the mode
 */
export function importingTrack(db: Db, generation: string): Promise<AudioTrackRow | null> {
  return db
    .prepare(`SELECT * FROM audio_tracks WHERE generation = ? AND ${TRACK_IMPORTS.fetching}`)
    .bind(generation)
    .first<AudioTrackRow>();
}

/**
 * Added audio tracks whose file no run is fetching: never started (their message lost) or whose
 * lease ran out this long ago without a run taking it, oldest first.
 *
 * @allModes the sweep looks after every import, in both modes
 */
export async function lostTrackImports(
  db: Db,
  before: number,
  limit: number,
): Promise<Pick<AudioTrackRow, "project_id" | "video_id" | "language" | "generation">[]> {
  const { results } = await db
    .prepare(
      `SELECT project_id, video_id, language, generation FROM audio_tracks
       WHERE ${TRACK_IMPORTS.fetching} AND (import_lease_until < ?1 OR (import_lease_until IS NULL AND updated_at < ?1))
       ORDER BY import_lease_until LIMIT ?2`,
    )
    .bind(isoTime(before), limit)
    .all<Pick<AudioTrackRow, "project_id" | "video_id" | "language" | "generation">>();
  return results;
}
