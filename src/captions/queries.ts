import type { Db } from "../lib/db";
import { type Swapped, swapInBatch } from "../lib/replace-object";
import { modeParam, type Tenant } from "../lib/tenant";
import { isoTime } from "../lib/time";
import { tenantVideoStatement } from "../videos/queries";
import type { CaptionRow, CaptionSource } from "./model";

/** A video's tracks, by language: to run alone, or in a batch with the read of the video. */
export function tracksStatement(db: Db, videoId: string): D1PreparedStatement {
  return db.prepare("SELECT * FROM captions WHERE video_id = ? ORDER BY language").bind(videoId);
}

/** One track of a video: to run in a batch with the read of the video. */
export function trackStatement(db: Db, videoId: string, language: string): D1PreparedStatement {
  return db.prepare("SELECT * FROM captions WHERE video_id = ? AND language = ?").bind(videoId, language);
}

/** The tracks of the tenant's live video `videoId`, in one round trip; null when there is no such video. */
export async function listTracks(db: Db, tenant: Tenant, videoId: string): Promise<CaptionRow[] | null> {
  const [video, tracks] = await db.batch([tenantVideoStatement(db, tenant, videoId), tracksStatement(db, videoId)]);
  return video?.results.length ? (tracks?.results as CaptionRow[]) : null;
}

export type NewTrack = { language: string; label: string; source: CaptionSource; key: string };

/** At most this many tracks per video (contract §17): a new language past it is `409 quota_exceeded`. */
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
  return swapInBatch<CaptionRow>(
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
  const [video, deleted] = await db.batch<{ id?: string; object_key?: string }>([
    tenantVideoStatement(db, tenant, videoId),
    db
      .prepare(
        `DELETE FROM captions WHERE video_id = ?1 AND language = ?2 AND project_id = ?3
           AND EXISTS (SELECT 1 FROM videos WHERE id = ?1 AND project_id = ?3
             AND livemode = coalesce(?4, livemode) AND deleted_at IS NULL)
         RETURNING object_key`,
      )
      .bind(videoId, language, tenant.projectId, modeParam(tenant)),
  ]);
  if (!video?.results.length) return null;
  return { key: deleted?.results[0]?.object_key ?? null };
}
