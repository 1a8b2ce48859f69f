import type { Position } from "../lib/cursor";
import { type Condition, type Db, IN_JSON_LIST, newestFirstPage } from "../lib/db";
import { changingPlayback } from "../lib/playback-cache";
import { modeConditions, modeParam, type Tenant } from "../lib/tenant";
import { isoTime } from "../lib/time";
import { recordEventsStatement } from "../outbox/queries";
import { videoDeletedEvent } from "./events";
import type { VideoRow, Visibility } from "./model";
import type { VideoFilter } from "./search";

/**
 * The insert of a new video, to run alone or in a batch with what belongs to it. With `whileLive`,
 * only while that video is live (a clip is made only of a video not deleted:
 * docs/import-clips-search.md#clips-as-videos-clipof), in the same statement, so no deletion comes
 * between the check and the insert.
 */
export function insertVideoStatement(db: Db, row: VideoRow, whileLive?: string): D1PreparedStatement {
  return db
    .prepare(
      `INSERT INTO videos (id, project_id, livemode, title, status, visibility, source_key, upload_id, upload_r2_id,
         upload_expires_at, completion_lease_until, created_at, updated_at, deleted_at, tus_upload_id, tags, metadata,
         allowed_origins, import_url, clip_of, clip_start, clip_end, generated_captions)
       SELECT ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?24
       WHERE ?23 IS NULL
         OR EXISTS (SELECT 1 FROM videos WHERE id = ?23 AND project_id = ?2 AND livemode = ?3 AND deleted_at IS NULL)`,
    )
    .bind(
      row.id,
      row.project_id,
      row.livemode,
      row.title,
      row.status,
      row.visibility,
      row.source_key,
      row.upload_id,
      row.upload_r2_id,
      row.upload_expires_at,
      row.completion_lease_until,
      row.created_at,
      row.updated_at,
      row.deleted_at,
      row.tus_upload_id,
      row.tags,
      row.metadata,
      row.allowed_origins,
      row.import_url,
      row.clip_of,
      row.clip_start,
      row.clip_end,
      whileLive ?? null,
      row.generated_captions,
    );
}

/**
 * "A live video of a live project" as one condition on `videos` (or on its alias `table`): neither
 * the video nor its project deleted. Whatever names a video by its id alone (playback, a public
 * thumbnail, an upload URL, the encoding) asks this. The project is looked up by its key (`EXISTS`):
 * a list of live projects (`IN (SELECT …)`) would be read whole on every request.
 */
export function liveVideoCondition(table = "videos"): string {
  return `${table}.deleted_at IS NULL
    AND EXISTS (SELECT 1 FROM projects WHERE projects.id = ${table}.project_id AND projects.deleted_at IS NULL)`;
}

/**
 * The tenant's live (not deleted) video `id`: its row, or none. A statement, so that what concerns
 * the video (its caption tracks, its chapters) is read or written in the same round trip.
 */
export function tenantVideoStatement(db: Db, tenant: Tenant, id: string): D1PreparedStatement {
  return db
    .prepare(
      "SELECT * FROM videos WHERE id = ? AND project_id = ? AND livemode = coalesce(?, livemode) AND deleted_at IS NULL",
    )
    .bind(id, tenant.projectId, modeParam(tenant));
}

/** A live (not deleted) video of the tenant. */
export function findVideo(db: Db, tenant: Tenant, id: string): Promise<VideoRow | null> {
  return tenantVideoStatement(db, tenant, id).first<VideoRow>();
}

/**
 * An edit of a video: only what is given changes (docs/api-rules.md#videos-and-their-uploads,
 * docs/import-clips-search.md#tags-and-metadata).
 */
export type VideoPatch = {
  title?: string | null | undefined;
  visibility?: Visibility | undefined;
  tags?: string[] | undefined;
  /** Merge-patched into the metadata: a null value removes its key. */
  metadata?: Record<string, string | null> | undefined;
  allowedOrigins?: string[] | undefined;
};

/**
 * Edits a live video in one statement: `title` when given (null clears it), the rest when given,
 * `metadata` merged (RFC 7396, as json_patch does) unless that leaves more than `maxPairs` pairs.
 * Null when the video is not the tenant's live video, or the merge would pass `maxPairs`.
 */
export function updateVideo(
  db: Db,
  tenant: Tenant,
  id: string,
  patch: VideoPatch,
  now: number,
  maxPairs: number,
): Promise<VideoRow | null> {
  const metadata = patch.metadata === undefined ? "{}" : JSON.stringify(patch.metadata);
  const edit = db
    .prepare(
      `UPDATE videos
       SET title = CASE WHEN ?3 THEN ?4 ELSE title END, visibility = coalesce(?5, visibility), updated_at = ?6,
           tags = coalesce(?8, tags), metadata = json_patch(metadata, ?9), allowed_origins = coalesce(?10, allowed_origins)
       WHERE id = ?1 AND project_id = ?2 AND livemode = coalesce(?7, livemode) AND deleted_at IS NULL
         AND (SELECT count(*) FROM json_each(json_patch(metadata, ?9))) <= ?11
       RETURNING *`,
    )
    .bind(
      id,
      tenant.projectId,
      patch.title === undefined ? 0 : 1,
      patch.title ?? null,
      patch.visibility ?? null,
      isoTime(now),
      modeParam(tenant),
      patch.tags === undefined ? null : JSON.stringify(patch.tags),
      metadata,
      patch.allowedOrigins === undefined ? null : JSON.stringify(patch.allowedOrigins),
      maxPairs,
    )
    .first<VideoRow>();
  // Any edit may change who may play it (visibility, allowed origins) or what its page shows.
  return changingPlayback(edit, (row) => (row ? [row.id] : null));
}

/** The live videos of the tenant among `ids`, in one round trip. */
export async function findVideos(db: Db, tenant: Tenant, ids: string[]): Promise<Map<string, VideoRow>> {
  const { results } = await db
    .prepare(
      `SELECT * FROM videos
       WHERE project_id = ? AND livemode = coalesce(?, livemode) AND deleted_at IS NULL AND id IN (${IN_JSON_LIST})`,
    )
    .bind(tenant.projectId, modeParam(tenant), JSON.stringify(ids))
    .all<VideoRow>();
  return new Map(results.map((row) => [row.id, row]));
}

/**
 * `limit + 1` live videos of the tenant after `after`, newest first, that pass every part of the
 * filter: the status as a client sees it (a completion whose lease ran out is waiting again), the
 * visibility, every tag, every metadata pair, the title's words (the video_titles index) and the
 * creation window. One seek on the project's newest-first index, the rest checked row by row,
 * except a title search, whose matches come from the word index first.
 */
export async function listVideos(
  db: Db,
  tenant: Tenant,
  filter: VideoFilter,
  limit: number,
  after: Position | null,
  now: number,
): Promise<VideoRow[]> {
  const conditions: Condition[] = [
    { sql: "project_id = ?", params: [tenant.projectId] },
    ...modeConditions(tenant),
    { sql: "deleted_at IS NULL", params: [] },
  ];
  const at = isoTime(now);
  if (filter.status === "waiting_for_upload") {
    conditions.push({
      sql: "(status = 'waiting_for_upload' OR (status = 'upload_completing' AND completion_lease_until <= ?))",
      params: [at],
    });
  } else if (filter.status === "upload_completing") {
    conditions.push({ sql: "status = 'upload_completing' AND completion_lease_until > ?", params: [at] });
  } else if (filter.status !== undefined) {
    conditions.push({ sql: "status = ?", params: [filter.status] });
  }
  if (filter.visibility !== undefined) conditions.push({ sql: "visibility = ?", params: [filter.visibility] });
  for (const tag of filter.tags ?? []) {
    conditions.push({ sql: "EXISTS (SELECT 1 FROM json_each(tags) WHERE value = ?)", params: [tag] });
  }
  for (const [key, value] of filter.metadata ?? []) {
    // Keys are [A-Za-z0-9_.-] (checked before), so quoting them makes a path that cannot be anything else.
    conditions.push({ sql: "metadata ->> ? = ?", params: [`$."${key}"`, value] });
  }
  if (filter.search !== undefined) {
    conditions.push({
      sql: "rowid IN (SELECT rowid FROM video_titles WHERE video_titles MATCH ?)",
      params: [filter.search],
    });
  }
  if (filter.createdAfter !== undefined) conditions.push({ sql: "created_at > ?", params: [filter.createdAfter] });
  if (filter.createdBefore !== undefined) conditions.push({ sql: "created_at < ?", params: [filter.createdBefore] });
  const { sql, params } = newestFirstPage("videos", conditions, after, limit);
  return (
    await db
      .prepare(sql)
      .bind(...params)
      .all<VideoRow>()
  ).results;
}

/** Sets the visibility of the tenant's live videos among `ids`; returns the ids it changed. */
export async function setVisibility(
  db: Db,
  tenant: Tenant,
  ids: string[],
  visibility: Visibility,
  now: number,
): Promise<Set<string>> {
  const { results } = await changingPlayback(
    db
      .prepare(
        `UPDATE videos SET visibility = ?, updated_at = ?
         WHERE project_id = ? AND livemode = coalesce(?, livemode) AND deleted_at IS NULL AND id IN (${IN_JSON_LIST})
         RETURNING id`,
      )
      .bind(visibility, isoTime(now), tenant.projectId, modeParam(tenant), JSON.stringify(ids))
      .all<{ id: string }>(),
    (changed) => changed.results.map((row) => row.id),
  );
  return new Set(results.map((row) => row.id));
}

/**
 * The soft delete of videos and their video.deleted events, as the two statements of one atomic
 * batch, whatever the number of ids. The update applies only to live videos with no completion in
 * flight, and returns the ids it deleted (a deleted video takes no more uploads or thumbnails);
 * an event is written only for a video this batch deleted, at most
 * once per video (unique on type and subject). `eventIds` maps each video id to its event's id.
 */
export function deleteVideosStatements(
  db: Db,
  tenant: Tenant,
  ids: string[],
  eventIds: Record<string, string>,
  now: number,
): [D1PreparedStatement, D1PreparedStatement] {
  const at = isoTime(now);
  const { projectId } = tenant;
  const mode = modeParam(tenant);
  const events = ids.map((id) => ({
    id: eventIds[id] as string,
    type: "video.deleted" as const,
    subjectId: id,
    payload: videoDeletedEvent(id, projectId, at),
  }));
  return [
    db
      .prepare(
        `UPDATE videos
         SET deleted_at = ?1, updated_at = ?1, upload_id = NULL, upload_expires_at = NULL,
             completion_lease_until = NULL,
             status = CASE WHEN status = 'upload_completing' THEN 'waiting_for_upload' ELSE status END
         WHERE project_id = ?2 AND livemode = coalesce(?4, livemode) AND id IN (SELECT value FROM json_each(?3))
           AND deleted_at IS NULL AND NOT (status = 'upload_completing' AND completion_lease_until > ?1)
         RETURNING id`,
      )
      .bind(at, projectId, JSON.stringify(ids), mode),
    // Only the videos this batch deleted (deleted at this very instant) get their event.
    recordEventsStatement(db, projectId, events, at, {
      sql: "SELECT id FROM videos WHERE project_id = ? AND livemode = coalesce(?, livemode) AND deleted_at = ?",
      params: [projectId, mode, at],
    }),
  ];
}

/**
 * Up to `limit` test videos (docs/api-guide.md#test-mode-and-going-live) created at or before
 * `createdBefore`, not deleted, of projects not deleted (a deleted project's videos go with its
 * purge, with no video.deleted each), oldest first, after `after`: what the expiry sweep deletes.
 *
 * @allModes the expiry sweep reads test videos only (livemode = 0), for no caller
 */
export async function expiredTestVideos(
  db: Db,
  createdBefore: string,
  after: Position | null,
  limit: number,
): Promise<Pick<VideoRow, "id" | "project_id" | "created_at">[]> {
  const { results } = await db
    .prepare(
      // One ordered seek on videos_test_expiry, and the video's project by its key.
      `SELECT v.id, v.project_id, v.created_at FROM videos v
       WHERE v.livemode = 0 AND v.deleted_at IS NULL AND v.created_at <= ?1 AND (v.created_at, v.id) > (?2, ?3)
         AND NOT EXISTS (SELECT 1 FROM projects p WHERE p.id = v.project_id AND p.deleted_at IS NOT NULL)
       ORDER BY v.created_at, v.id LIMIT ?4`,
    )
    .bind(createdBefore, after?.createdAt ?? "", after?.id ?? "", limit)
    .all<Pick<VideoRow, "id" | "project_id" | "created_at">>();
  return results;
}
