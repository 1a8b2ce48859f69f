import type { Db } from "../lib/db";
import { changingPlayback } from "../lib/playback-cache";
import { type Swapped, swapInBatch } from "../lib/replace-object";
import { modeParam, type Tenant } from "../lib/tenant";
import { isoTime } from "../lib/time";
import { type NewEvent, recordEventsStatement } from "../outbox/queries";
import { tenantVideoStatement } from "../videos/queries";
import type { CaptionRow, CaptionSource, CaptionStatus } from "./model";

/** A video's tracks, by language, whatever their status. */
function tracksStatement(db: Db, videoId: string): D1PreparedStatement {
  return db.prepare("SELECT * FROM captions WHERE video_id = ? ORDER BY language").bind(videoId);
}

/** The video's tracks that play (`ready`), by language: to batch with the playback read of the video. */
export function playableTracksStatement(db: Db, videoId: string): D1PreparedStatement {
  return db.prepare("SELECT * FROM captions WHERE video_id = ? AND status = 'ready' ORDER BY language").bind(videoId);
}

/** The tracks of the tenant's live video `videoId`, in one round trip; null when there is no such video. */
export async function listTracks(db: Db, tenant: Tenant, videoId: string): Promise<CaptionRow[] | null> {
  const [video, tracks] = await db.batch([tenantVideoStatement(db, tenant, videoId), tracksStatement(db, videoId)]);
  return video?.results.length ? (tracks?.results as CaptionRow[]) : null;
}

export type NewTrack = { language: string; label: string; source: CaptionSource; key: string };

/** At most this many tracks per video (docs/captions-and-embed.md): a new language past it is `409 quota_exceeded`. */
export const MAX_TRACKS = 20;

/**
 * Points the video's track of `track.language` at a new object (a `swap` for replaceObject): the
 * key it held before, and the track after, in one atomic batch. Null when the video is not a live
 * video of the tenant (deleted meanwhile included), or when the language is new and the video
 * holds MAX_TRACKS tracks already, so nothing was written (`listTracks` tells which).
 */
export function swapTrack(
  db: Db,
  tenant: Tenant,
  videoId: string,
  track: NewTrack,
  now: number,
): Promise<Swapped<CaptionRow> | null> {
  return changingPlayback(
    swapInBatch<CaptionRow>(
      db,
      db
        .prepare("SELECT object_key AS replaced FROM captions WHERE video_id = ? AND language = ? AND project_id = ?")
        .bind(videoId, track.language, tenant.projectId),
      db
        .prepare(
          `INSERT INTO captions (project_id, video_id, language, label, source, object_key, created_at, updated_at)
         SELECT project_id, id, ?3, ?4, ?5, ?6, ?7, ?7 FROM videos
         WHERE id = ?2 AND project_id = ?1 AND livemode = coalesce(?8, livemode) AND deleted_at IS NULL
           AND (EXISTS (SELECT 1 FROM captions WHERE video_id = ?2 AND language = ?3)
             OR (SELECT count(*) FROM captions WHERE video_id = ?2) < ?9)
         ON CONFLICT (video_id, language) DO UPDATE
           SET label = excluded.label, source = excluded.source, object_key = excluded.object_key,
               status = 'ready', generation = NULL, error_code = NULL, error_message = NULL,
               updated_at = excluded.updated_at
         RETURNING *`,
        )
        .bind(
          tenant.projectId,
          videoId,
          track.language,
          track.label,
          track.source,
          track.key,
          isoTime(now),
          modeParam(tenant),
          MAX_TRACKS,
        ),
    ),
    (swapped) => (swapped ? [videoId] : null),
  );
}

/**
 * Deletes the track of `language` of the tenant's live video `videoId`, in one round trip: null
 * when there is no such video, else the key of the track's object, or null as the key when the
 * video had no such track.
 */
export async function deleteTrack(
  db: Db,
  tenant: Tenant,
  videoId: string,
  language: string,
): Promise<{ key: string | null } | null> {
  const [video, deleted] = await changingPlayback(
    db.batch<{ id?: string; object_key?: string }>([
      tenantVideoStatement(db, tenant, videoId),
      db
        .prepare(
          `DELETE FROM captions WHERE video_id = ?1 AND language = ?2 AND project_id = ?3
           AND EXISTS (SELECT 1 FROM videos WHERE id = ?1 AND project_id = ?3
             AND livemode = coalesce(?4, livemode) AND deleted_at IS NULL)
         RETURNING object_key`,
        )
        .bind(videoId, language, tenant.projectId, modeParam(tenant)),
    ]),
    ([found]) => (found?.results.length ? [videoId] : null),
  );
  if (!video?.results.length) return null;
  return { key: deleted?.results[0]?.object_key ?? null };
}

/** What a generated track asked for is: its language and label, and its generation (a new ULID). */
export type GeneratedTrack = { language: string; label: string; generation: string };

/**
 * Asks for a generated track of `track.language` (a `swap` for replaceObject, which deletes the
 * WebVTT it held): `processing`, with no WebVTT yet, under a new generation; over a generated track
 * of that language (whatever its status) it replaces it. Null when nothing was written: the video
 * is not a live video of the tenant, the language has an uploaded track, or it is new and the video
 * holds MAX_TRACKS tracks already (`generatedTrackRefusal` tells which).
 */
export function startGeneratedTrack(
  db: Db,
  tenant: Tenant,
  videoId: string,
  track: GeneratedTrack,
  now: number,
): Promise<Swapped<CaptionRow> | null> {
  return changingPlayback(
    swapInBatch<CaptionRow>(
      db,
      db
        .prepare(
          "SELECT object_key AS replaced FROM captions WHERE video_id = ? AND language = ? AND project_id = ? AND source = 'generated'",
        )
        .bind(videoId, track.language, tenant.projectId),
      db
        .prepare(
          `INSERT INTO captions (project_id, video_id, language, label, source, object_key, status, generation,
           created_at, updated_at)
         SELECT project_id, id, ?3, ?4, 'generated', '', 'processing', ?5, ?6, ?6 FROM videos
         WHERE id = ?2 AND project_id = ?1 AND livemode = coalesce(?7, livemode) AND deleted_at IS NULL
           AND NOT EXISTS (SELECT 1 FROM captions WHERE video_id = ?2 AND language = ?3 AND source = 'upload')
           AND (EXISTS (SELECT 1 FROM captions WHERE video_id = ?2 AND language = ?3)
             OR (SELECT count(*) FROM captions WHERE video_id = ?2) < ?8)
         ON CONFLICT (video_id, language) DO UPDATE
           SET label = excluded.label, source = 'generated', object_key = '', status = 'processing',
               generation = excluded.generation, error_code = NULL, error_message = NULL,
               updated_at = excluded.updated_at
         RETURNING *`,
        )
        .bind(
          tenant.projectId,
          videoId,
          track.language,
          track.label,
          track.generation,
          isoTime(now),
          modeParam(tenant),
          MAX_TRACKS,
        ),
    ),
    (swapped) => (swapped ? [videoId] : null),
  );
}

/** Why `startGeneratedTrack` wrote nothing: the video is gone, the language was uploaded, or the video is full. */
export async function generatedTrackRefusal(
  db: Db,
  tenant: Tenant,
  videoId: string,
  language: string,
): Promise<"video_not_found" | "captions_exist" | "quota_exceeded"> {
  const tracks = await listTracks(db, tenant, videoId);
  if (tracks === null) return "video_not_found";
  if (tracks.some((track) => track.language === language && track.source === "upload")) return "captions_exist";
  return "quota_exceeded";
}

/** How a generated track ends: made (its WebVTT's key), skipped, or errored with the reason. */
export type TrackOutcome =
  | { status: "ready"; key: string }
  | { status: "skipped" }
  | { status: "errored"; message: string };

/**
 * Ends the generated track of `language` that generation `generation` asked for (a `swap` for
 * replaceObject), with its event when it has one, in one batch: the event exists exactly when the
 * track changed. Null when that track is no longer processing under that generation (asked for
 * again, replaced by an upload, deleted, or its video deleted): nothing changed.
 *
 * @allModes the coordinator's result names its video by id; the track takes its video's mode
 */
export function finishGeneratedTrack(
  db: Db,
  track: { videoId: string; language: string; generation: string },
  outcome: TrackOutcome,
  now: number,
  event: (after: CaptionRow) => NewEvent | null,
  before: CaptionRow,
): Promise<Swapped<CaptionRow> | null> {
  const at = isoTime(now);
  const status: CaptionStatus = outcome.status;
  const after: CaptionRow = {
    ...before,
    status,
    object_key: outcome.status === "ready" ? outcome.key : "",
    error_code: outcome.status === "errored" ? "transcription_failed" : null,
    error_message: outcome.status === "errored" ? outcome.message : null,
    updated_at: at,
  };
  const recorded = event(after);
  const changed = {
    sql: `SELECT video_id FROM captions WHERE video_id = ? AND language = ? AND generation = ? AND updated_at = ?
            AND EXISTS (SELECT 1 FROM videos WHERE id = ? AND deleted_at IS NULL)`,
    params: [track.videoId, track.language, track.generation, at, track.videoId],
  };
  return changingPlayback(
    swapInBatch<CaptionRow>(
      db,
      db
        .prepare("SELECT object_key AS replaced FROM captions WHERE video_id = ? AND language = ? AND generation = ?")
        .bind(track.videoId, track.language, track.generation),
      db
        .prepare(
          `UPDATE captions SET status = ?1, object_key = ?2, error_code = ?3, error_message = ?4, updated_at = ?5
         WHERE video_id = ?6 AND language = ?7 AND generation = ?8 AND status = 'processing'
           AND EXISTS (SELECT 1 FROM videos WHERE id = ?6 AND deleted_at IS NULL)
         RETURNING *`,
        )
        .bind(
          after.status,
          after.object_key,
          after.error_code,
          after.error_message,
          at,
          track.videoId,
          track.language,
          track.generation,
        ),
      recorded ? [recordEventsStatement(db, before.project_id, [recorded], at, changed)] : [],
    ),
    (swapped) => (swapped ? [track.videoId] : null),
  );
}

/**
 * The generated track of `language` that generation `generation` asked for, while it is processing,
 * with its video's duration (null once it is not processing, or its video is deleted or has no
 * duration).
 *
 * @allModes the coordinator's result names its video by id
 */
export async function processingTrack(
  db: Db,
  videoId: string,
  language: string,
  generation: string,
): Promise<{ row: CaptionRow; duration: number } | null> {
  const found = await db
    .prepare(
      `SELECT c.*, v.duration AS video_duration FROM captions c JOIN videos v ON v.id = c.video_id
       WHERE c.video_id = ?1 AND c.language = ?2 AND c.generation = ?3 AND c.status = 'processing'
         AND v.deleted_at IS NULL AND v.duration IS NOT NULL`,
    )
    .bind(videoId, language, generation)
    .first<CaptionRow & { video_duration: number }>();
  if (!found) return null;
  const { video_duration: duration, ...row } = found;
  return { row, duration };
}
