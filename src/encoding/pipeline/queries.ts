import type { Db } from "../../lib/db";
import { isoTime } from "../../lib/time";
import { recordEventsStatement } from "../../outbox/queries";
import type { VideoEncodingEvent } from "../../videos/events";
import type { Rendition, VideoRow } from "../../videos/model";
import { liveVideoCondition } from "../../videos/queries";

/** A live video of a live project, as one condition on `videos`. */
const LIVE = liveVideoCondition();

/**
 * Starts the encoding of an uploaded video: `processing`, heard from now, with the project's
 * settings kept (`settings` is used only when none are kept yet). Null when the video is not
 * `uploaded` (started already, deleted).
 */
export function claimEncoding(db: Db, videoId: string, settings: string, now: number): Promise<VideoRow | null> {
  return db
    .prepare(
      `UPDATE videos SET status = 'processing', encode_heartbeat_at = ?1, updated_at = ?1,
         encode_settings = COALESCE(encode_settings, ?2)
       WHERE id = ?3 AND status = 'uploaded' AND ${LIVE}
       RETURNING *`,
    )
    .bind(isoTime(now), settings, videoId)
    .first<VideoRow>();
}

/** The live video whatever its state (null once it is deleted or gone). */
export function liveVideo(db: Db, videoId: string): Promise<VideoRow | null> {
  return db.prepare(`SELECT * FROM videos WHERE id = ? AND ${LIVE}`).bind(videoId).first<VideoRow>();
}

/** Records that the video's encoding is alive (the sweep resumes one that is not heard from). */
export async function recordHeartbeat(db: Db, videoId: string, now: number): Promise<void> {
  await db
    .prepare(`UPDATE videos SET encode_heartbeat_at = ?1 WHERE id = ?2 AND status = 'processing' AND ${LIVE}`)
    .bind(isoTime(now), videoId)
    .run();
}

/** What an encoding ends with, or the step that makes the video playable on the way. */
export type Change =
  | { status: "playable"; plan: string; duration: number; width: number; height: number; audioLanguage: string | null }
  | { status: "ready"; renditions: Rendition[]; mp4: boolean; m4a: boolean }
  | { status: "errored"; code: "invalid_source" | "encoding_failed"; message: string };

/**
 * Applies `change` to a video that is `processing`, with its event (built by `event` from the row
 * as it will be) in one batch: the event exists exactly when the change does, once per video and
 * type. Null when the video is no longer processing (deleted meanwhile).
 */
export async function changeEncoding(
  db: Db,
  row: VideoRow,
  change: Change,
  now: number,
  event: (after: VideoRow) => { id: string; event: VideoEncodingEvent },
): Promise<VideoRow | null> {
  const at = isoTime(now);
  const columns = columnsOf(change, at);
  const after: VideoRow = { ...row, ...columns, updated_at: at };
  const names = Object.keys(columns);
  const update = db
    .prepare(
      `UPDATE videos SET ${names.map((name, index) => `${name} = ?${index + 3}`).join(", ")}, updated_at = ?1
       WHERE id = ?2 AND status = 'processing' AND ${LIVE}
       RETURNING *`,
    )
    .bind(at, row.id, ...Object.values(columns));
  const recorded = event(after);
  const [updated] = await db.batch([
    update,
    recordEventsStatement(
      db,
      row.project_id,
      [{ id: recorded.id, type: recorded.event.type, subjectId: row.id, payload: recorded.event }],
      at,
      {
        sql: "SELECT id FROM videos WHERE id = ? AND status = ? AND updated_at = ?",
        params: [row.id, after.status, at],
      },
    ),
  ]);
  return (updated?.results[0] as VideoRow | undefined) ?? null;
}

function columnsOf(change: Change, at: string): Partial<VideoRow> {
  switch (change.status) {
    case "playable":
      return {
        encode_plan: change.plan,
        playable_at: at,
        duration: change.duration,
        width: change.width,
        height: change.height,
        audio_language: change.audioLanguage,
      };
    case "ready":
      return {
        status: "ready",
        renditions: JSON.stringify(change.renditions),
        has_mp4: change.mp4 ? 1 : 0,
        has_m4a: change.m4a ? 1 : 0,
        encode_heartbeat_at: null,
      };
    case "errored":
      return { status: "errored", error_code: change.code, error_message: change.message, encode_heartbeat_at: null };
  }
}

/** Encodings not heard from since `before`: the sweep resumes their coordinator. */
export function silentEncodings(db: Db, before: string, limit: number): Promise<VideoRow[]> {
  return stale(db, "processing", "encode_heartbeat_at", before, limit);
}

/** Uploaded videos no encoding has started for since `before`: their queue message was lost. */
export function waitingEncodes(db: Db, before: string, limit: number): Promise<VideoRow[]> {
  return stale(db, "uploaded", "updated_at", before, limit);
}

/** Live videos in `status` whose `since` is before `before`, oldest first. */
async function stale(
  db: Db,
  status: "processing" | "uploaded",
  since: "encode_heartbeat_at" | "updated_at",
  before: string,
  limit: number,
): Promise<VideoRow[]> {
  const { results } = await db
    .prepare(`SELECT * FROM videos WHERE status = ?1 AND ${since} < ?2 AND ${LIVE} ORDER BY ${since} LIMIT ?3`)
    .bind(status, before, limit)
    .all<VideoRow>();
  return results;
}
