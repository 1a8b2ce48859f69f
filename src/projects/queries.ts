import type { Plan } from "../auth/account";
import { insertDefaultsStatement } from "../encoding/queries";
import { type Db, IN_JSON_LIST } from "../lib/db";
import { changingPlayback } from "../lib/playback-cache";
import { isoTime } from "../lib/time";

type ProjectRow = {
  id: string;
  account_id: string;
  name: string;
  plan: Plan;
  created_at: string;
  deleted_at: string | null;
};

export type Project = { id: string; name: string; plan: Plan; createdAt: string };

function toProject(row: ProjectRow): Project {
  return { id: row.id, name: row.name, plan: row.plan, createdAt: row.created_at };
}

export async function insertProject(
  db: Db,
  input: { id: string; accountId: string; name: string; plan: Plan; createdAt: string },
): Promise<Project> {
  // A project never exists without its encoding settings.
  await db.batch([
    db
      .prepare("INSERT INTO projects (id, account_id, name, plan, created_at) VALUES (?, ?, ?, ?, ?)")
      .bind(input.id, input.accountId, input.name, input.plan, input.createdAt),
    insertDefaultsStatement(db, input.id, Date.parse(input.createdAt)),
  ]);
  return { id: input.id, name: input.name, plan: input.plan, createdAt: input.createdAt };
}

export async function listProjects(db: Db, accountId: string): Promise<Project[]> {
  const { results } = await db
    .prepare("SELECT * FROM projects WHERE account_id = ? AND deleted_at IS NULL ORDER BY created_at DESC, id DESC")
    .bind(accountId)
    .all<ProjectRow>();
  return results.map(toProject);
}

/**
 * The account's project with this id, or null: unknown, foreign and deleted projects look the same.
 */
export async function findOwnedProject(db: Db, accountId: string, projectId: string): Promise<Project | null> {
  const row = await db
    .prepare("SELECT * FROM projects WHERE id = ? AND account_id = ? AND deleted_at IS NULL")
    .bind(projectId, accountId)
    .first<ProjectRow>();
  return row ? toProject(row) : null;
}

/**
 * Marks the account's live project deleted, in one statement; false for an unknown, foreign or
 * already deleted project. From then on every read path treats the project as gone (they all
 * require `deleted_at IS NULL`); the purge removes what it stored.
 */
export async function markProjectDeleted(db: Db, accountId: string, projectId: string, now: number): Promise<boolean> {
  // Its videos stop playing at once: every remembered playback state goes.
  const row = await changingPlayback(
    db
      .prepare(
        "UPDATE projects SET deleted_at = ?1 WHERE id = ?2 AND account_id = ?3 AND deleted_at IS NULL RETURNING id",
      )
      .bind(isoTime(now), projectId, accountId)
      .first(),
    (deleted) => (deleted ? "all" : null),
  );
  return row !== null;
}

/** Deleted projects whose purge is not finished, deleted before `before`, oldest first. */
export async function deletedProjects(db: Db, before: number, limit: number): Promise<string[]> {
  const { results } = await db
    .prepare("SELECT id FROM projects WHERE deleted_at IS NOT NULL AND deleted_at < ? ORDER BY deleted_at LIMIT ?")
    .bind(isoTime(before), limit)
    .all<{ id: string }>();
  return results.map((row) => row.id);
}

/** The project's state for its purge: "live", "deleted", or "gone" (its row is purged already). */
export async function projectState(db: Db, projectId: string): Promise<"live" | "deleted" | "gone"> {
  const row = await db
    .prepare("SELECT deleted_at FROM projects WHERE id = ?")
    .bind(projectId)
    .first<{ deleted_at: string | null }>();
  if (!row) return "gone";
  return row.deleted_at === null ? "live" : "deleted";
}

export type OpenUpload = { id: string; source_key: string; upload_r2_id: string; tus_upload_id: string | null };

/**
 * Up to `limit` videos of the project (deleted ones too) whose R2 multipart upload is still open.
 *
 * @allModes a deleted project's purge removes its rows of both modes
 */
export async function openUploads(db: Db, projectId: string, limit: number): Promise<OpenUpload[]> {
  const { results } = await db
    .prepare(
      "SELECT id, source_key, upload_r2_id, tus_upload_id FROM videos WHERE project_id = ? AND upload_r2_id IS NOT NULL LIMIT ?",
    )
    .bind(projectId, limit)
    .all<OpenUpload>();
  return results;
}

/**
 * Up to `limit` of the project's videos whose encoding may be running (uploaded or processing).
 *
 * @allModes a deleted project's purge removes its rows of both modes
 */
export async function encodingVideos(db: Db, projectId: string, limit: number): Promise<{ id: string }[]> {
  const { results } = await db
    .prepare(
      "SELECT id FROM videos WHERE project_id = ? AND status IN ('uploaded', 'processing') AND deleted_at IS NULL LIMIT ?",
    )
    .bind(projectId, limit)
    .all<{ id: string }>();
  return results;
}

/**
 * Marks videos whose encoding the purge stopped as gone with their project: deleted, and cleared
 * (the purge removes their objects by the project's prefix, not the deleted-video sweep).
 *
 * @allModes a deleted project's purge removes its rows of both modes
 */
export function encodingStoppedStatement(db: Db, ids: string[], now: string): D1PreparedStatement {
  return db
    .prepare(
      `UPDATE videos SET deleted_at = COALESCE(deleted_at, ?1), storage_cleared_at = ?1
       WHERE id IN (${IN_JSON_LIST})`,
    )
    .bind(now, JSON.stringify(ids));
}

/**
 * Forgets these aborted multipart uploads (unless a video has another one since).
 *
 * @allModes a deleted project's purge removes its rows of both modes
 */
export function clearUploadsStatement(db: Db, rows: OpenUpload[]): D1PreparedStatement {
  return db
    .prepare(
      `UPDATE videos SET upload_r2_id = NULL
       WHERE (id, upload_r2_id) IN (SELECT key, value FROM json_each(?1))`,
    )
    .bind(JSON.stringify(Object.fromEntries(rows.map((row) => [row.id, row.upload_r2_id]))));
}

/**
 * Every table that holds a project's rows, children before parents, each as a delete of at most
 * `?2` rows of project `?1`. Attempts go before the endpoints and events they refer to. A video
 * whose multipart upload is still open is kept until it has been aborted (the purge aborts first;
 * this keeps one written meanwhile from being forgotten).
 */
const PURGED_TABLES = {
  webhook_deliveries: `DELETE FROM webhook_deliveries WHERE id IN (
      SELECT d.id FROM webhook_endpoints e JOIN webhook_deliveries d ON d.endpoint_id = e.id WHERE e.project_id = ?1
      UNION
      SELECT d.id FROM outbox_events o JOIN webhook_deliveries d ON d.event_id = o.id WHERE o.project_id = ?1
      LIMIT ?2)`,
  tus_uploads: `DELETE FROM tus_uploads WHERE id IN (
      SELECT id FROM tus_uploads WHERE project_id = ?1 LIMIT ?2)`,
  upload_parts: `DELETE FROM upload_parts WHERE rowid IN (
      SELECT rowid FROM upload_parts WHERE project_id = ?1 LIMIT ?2)`,
  captions: `DELETE FROM captions WHERE rowid IN (
      SELECT rowid FROM captions WHERE project_id = ?1 LIMIT ?2)`,
  chapters: `DELETE FROM chapters WHERE video_id IN (
      SELECT video_id FROM chapters WHERE project_id = ?1 LIMIT ?2)`,
  audio_tracks: `DELETE FROM audio_tracks WHERE rowid IN (
      SELECT rowid FROM audio_tracks WHERE project_id = ?1 LIMIT ?2)`,
  webhook_endpoints: `DELETE FROM webhook_endpoints WHERE id IN (
      SELECT id FROM webhook_endpoints WHERE project_id = ?1 LIMIT ?2)`,
  outbox_events: `DELETE FROM outbox_events WHERE id IN (
      SELECT id FROM outbox_events WHERE project_id = ?1 LIMIT ?2)`,
  videos: `DELETE FROM videos WHERE id IN (
      SELECT id FROM videos WHERE project_id = ?1 AND upload_r2_id IS NULL LIMIT ?2)`,
  api_keys: `DELETE FROM api_keys WHERE id IN (
      SELECT id FROM api_keys WHERE project_id = ?1 LIMIT ?2)`,
  encoding_settings: `DELETE FROM encoding_settings WHERE project_id IN (
      SELECT project_id FROM encoding_settings WHERE project_id = ?1 LIMIT ?2)`,
} as const;

export type PurgedTable = keyof typeof PURGED_TABLES;
export const PURGED_TABLE_ORDER = Object.keys(PURGED_TABLES) as PurgedTable[];

/**
 * Deletes at most `limit` of the deleted project's rows from `table`.
 *
 * @allModes a deleted project's purge removes its rows of both modes
 */
export function purgeRowsStatement(db: Db, table: PurgedTable, projectId: string, limit: number): D1PreparedStatement {
  return db.prepare(PURGED_TABLES[table]).bind(projectId, limit);
}

/**
 * Deletes the deleted project's own row, the purge's last step: only once no row of it is left in
 * any table (something written meanwhile keeps it, for the next run).
 *
 * @allModes a deleted project's purge removes its rows of both modes
 */
export function deleteProjectRowStatement(db: Db, projectId: string): D1PreparedStatement {
  const leftovers = PURGED_TABLE_ORDER.filter((table) => table !== "webhook_deliveries")
    .map((table) => `NOT EXISTS (SELECT 1 FROM ${table} WHERE project_id = ?1)`)
    .join(" AND ");
  return db.prepare(`DELETE FROM projects WHERE id = ?1 AND deleted_at IS NOT NULL AND ${leftovers}`).bind(projectId);
}
