import type { Db } from "../lib/db";
import { changingPlayback } from "../lib/playback-cache";
import { type Swapped, swapInBatch } from "../lib/replace-object";
import { modeParam, type Tenant } from "../lib/tenant";
import { isoTime } from "../lib/time";
import type { VideoRow } from "../videos/model";
import type { AudioTrackError, AudioTrackRow } from "./model";

/** The tenant's live video `videoId`, to batch with what concerns its tracks. */
function tenantVideoStatement(db: Db, tenant: Tenant, videoId: string): D1PreparedStatement {
  return db
    .prepare(
      "SELECT * FROM videos WHERE id = ? AND project_id = ? AND livemode = coalesce(?, livemode) AND deleted_at IS NULL",
    )
    .bind(videoId, tenant.projectId, modeParam(tenant));
}

/** A video's added tracks, by language, whatever their status. */
function tracksStatement(db: Db, videoId: string): D1PreparedStatement {
  return db.prepare("SELECT * FROM audio_tracks WHERE video_id = ? ORDER BY language").bind(videoId);
}

/** The video's added tracks that play (`ready`), by language: to batch with the playback read of the video. */
export function playableAudioTracksStatement(db: Db, videoId: string): D1PreparedStatement {
  return db
    .prepare("SELECT * FROM audio_tracks WHERE video_id = ? AND status = 'ready' ORDER BY language")
    .bind(videoId);
}

/** The tenant's live video `videoId` and its added tracks, in one round trip; null when there is no such video. */
export async function videoWithAudioTracks(
  db: Db,
  tenant: Tenant,
  videoId: string,
): Promise<{ video: VideoRow; tracks: AudioTrackRow[] } | null> {
  const [video, tracks] = await db.batch([tenantVideoStatement(db, tenant, videoId), tracksStatement(db, videoId)]);
  const row = video?.results[0] as VideoRow | undefined;
  return row ? { video: row, tracks: (tracks?.results ?? []) as AudioTrackRow[] } : null;
}

/**
 * What a PUT of a language asks for: its label, its generation's file, and the URL that file is
 * fetched from (null when the PUT sent its bytes).
 */
export type NewAudioTrack = {
  language: string;
  label: string;
  generation: string;
  sourceKey: string;
  importUrl: string | null;
};

/**
 * Points the video's track of `track.language` at a new generation (a `swap` for replaceObject):
 * the generation the track had before (whose objects then go), and the track after,
 * `processing`, in one atomic batch. Null when nothing was written: the video is not a live,
 * `ready` video of the tenant (deleted meanwhile included), or the language is new and the video
 * holds `limit` added tracks already.
 */
export function startAudioTrack(
  db: Db,
  tenant: Tenant,
  videoId: string,
  track: NewAudioTrack,
  limit: number,
  now: number,
): Promise<Swapped<AudioTrackRow> | null> {
  // A replaced ready track stops playing with it.
  return changingPlayback(
    swapInBatch<AudioTrackRow>(
      db,
      db
        .prepare(
          "SELECT generation AS replaced FROM audio_tracks WHERE video_id = ? AND language = ? AND project_id = ?",
        )
        .bind(videoId, track.language, tenant.projectId),
      db
        .prepare(
          `INSERT INTO audio_tracks (project_id, video_id, language, label, generation, source_key, status,
           import_url, created_at, updated_at)
         SELECT project_id, id, ?3, ?4, ?5, ?6, 'processing', ?10, ?7, ?7 FROM videos
         WHERE id = ?2 AND project_id = ?1 AND livemode = coalesce(?8, livemode) AND deleted_at IS NULL
           AND status = 'ready'
           AND (EXISTS (SELECT 1 FROM audio_tracks WHERE video_id = ?2 AND language = ?3)
             OR (SELECT count(*) FROM audio_tracks WHERE video_id = ?2) < ?9)
         ON CONFLICT (video_id, language) DO UPDATE
           SET label = excluded.label, generation = excluded.generation, source_key = excluded.source_key,
               status = 'processing', error_code = NULL, error_message = NULL, import_url = excluded.import_url,
               import_validator = NULL, import_lease_until = NULL, import_failures = 0, upload_r2_id = NULL,
               updated_at = excluded.updated_at
         RETURNING *`,
        )
        .bind(
          tenant.projectId,
          videoId,
          track.language,
          track.label,
          track.generation,
          track.sourceKey,
          isoTime(now),
          modeParam(tenant),
          limit,
          track.importUrl,
        ),
    ),
    (swapped) => (swapped ? [videoId] : null),
  );
}

/**
 * Deletes the track of `language` of the tenant's live video `videoId`, in one round trip: null
 * when there is no such video, else the video and the deleted track (null when the video had none
 * of that language).
 */
export async function deleteAudioTrack(
  db: Db,
  tenant: Tenant,
  videoId: string,
  language: string,
): Promise<{ video: VideoRow; deleted: AudioTrackRow | null } | null> {
  const [video, deleted] = await changingPlayback(
    db.batch([
      tenantVideoStatement(db, tenant, videoId),
      db
        .prepare(
          `DELETE FROM audio_tracks WHERE video_id = ?1 AND language = ?2 AND project_id = ?3
           AND EXISTS (SELECT 1 FROM videos WHERE id = ?1 AND project_id = ?3
             AND livemode = coalesce(?4, livemode) AND deleted_at IS NULL)
         RETURNING *`,
        )
        .bind(videoId, language, tenant.projectId, modeParam(tenant)),
    ]),
    ([found]) => (found?.results.length ? [videoId] : null),
  );
  const row = video?.results[0] as VideoRow | undefined;
  if (!row) return null;
  return { video: row, deleted: (deleted?.results[0] as AudioTrackRow | undefined) ?? null };
}

/**
 * The video's track of `language` as it stands, while its video is live: what its coordinator
 * makes (the generation the row names; none once deleted).
 *
 * @allModes the coordinator names the video by id (its message came from a route that checked the caller's mode)
 */
export function audioTrackOf(db: Db, videoId: string, language: string): Promise<AudioTrackRow | null> {
  return db
    .prepare(
      `SELECT * FROM audio_tracks WHERE video_id = ?1 AND language = ?2
         AND EXISTS (SELECT 1 FROM videos WHERE id = ?1 AND deleted_at IS NULL)`,
    )
    .bind(videoId, language)
    .first<AudioTrackRow>();
}

/** How making a track ends: every segment stored, or errored with the reason. */
export type AudioTrackOutcome = { status: "ready" } | ({ status: "errored" } & AudioTrackError);

/** Which making of which track: the video, the language, the generation (its PUT). */
export type TrackGeneration = { videoId: string; language: string; generation: string };

/**
 * Ends the making of generation `generation` of the track of `language`: ready, or errored. False
 * when that track is no longer processing under that generation (put again, deleted, or its
 * video deleted): nothing changed, and its objects are no track's.
 *
 * @allModes the coordinator's result names its video by id; the track takes its video's mode
 */
export async function finishAudioTrack(
  db: Db,
  track: TrackGeneration,
  outcome: AudioTrackOutcome,
  now: number,
): Promise<boolean> {
  const error = outcome.status === "errored" ? outcome : null;
  const finishing = db
    .prepare(
      `UPDATE audio_tracks SET status = ?1, error_code = ?2, error_message = ?3, updated_at = ?4
       WHERE video_id = ?5 AND language = ?6 AND generation = ?7 AND status = 'processing'
         AND EXISTS (SELECT 1 FROM videos WHERE id = ?5 AND deleted_at IS NULL)
       RETURNING video_id`,
    )
    .bind(
      outcome.status,
      error?.code ?? null,
      error?.message ?? null,
      isoTime(now),
      track.videoId,
      track.language,
      track.generation,
    )
    .first();
  // A ready track joins the master playlist with it.
  const changed = await changingPlayback(finishing, (row) => (row ? [track.videoId] : null));
  return changed !== null;
}

/**
 * Forgets the parts a generation's fetch recorded (docs/imports.md: an audio track's file, put by
 * URL, keeps them under its generation) once no track names that generation.
 *
 * @allModes the generation was found for the caller (or by the coordinator) before; its rows have no mode of their own
 */
export async function forgetFetchedParts(db: Db, projectId: string, generation: string): Promise<void> {
  await db.prepare("DELETE FROM upload_parts WHERE project_id = ? AND video_id = ?").bind(projectId, generation).run();
}
