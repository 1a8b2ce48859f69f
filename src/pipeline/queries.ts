import { recordEventsStatement } from "../events/outbox-queries";
import type { Db } from "../lib/db";
import { isoTime } from "../lib/time";
import type { Rendition, VideoRow } from "../videos/model";
import type { VideoOutcomeEvent } from "./events";

/** A live video of a live project, as one condition on `videos`. */
const LIVE = "deleted_at IS NULL AND project_id IN (SELECT id FROM projects WHERE deleted_at IS NULL)";

/**
 * Starts attempt `encode_attempt + 1` of an uploaded video: `processing`, heard from now, with the
 * project's settings kept from the first attempt (`settings` is used only when none are kept yet).
 * Null when the video is not uploaded (already started, deleted, or out of attempts).
 */
export function claimAttempt(
  db: Db,
  videoId: string,
  settings: string,
  maxAttempts: number,
  now: number,
): Promise<VideoRow | null> {
  return db
    .prepare(
      `UPDATE videos SET status = 'processing', encode_attempt = encode_attempt + 1,
         encode_heartbeat_at = ?1, updated_at = ?1, encode_settings = COALESCE(encode_settings, ?2)
       WHERE id = ?3 AND status = 'uploaded' AND encode_attempt < ?4 AND ${LIVE}
       RETURNING *`,
    )
    .bind(isoTime(now), settings, videoId, maxAttempts)
    .first<VideoRow>();
}

/** Gives back an attempt that never reached an encoder (all were busy): the video is uploaded again. */
export async function unclaimAttempt(db: Db, videoId: string, attempt: number, now: number): Promise<void> {
  await db
    .prepare(
      `UPDATE videos SET status = 'uploaded', encode_attempt = encode_attempt - 1, encode_heartbeat_at = NULL,
         updated_at = ?1
       WHERE id = ?2 AND status = 'processing' AND encode_attempt = ?3`,
    )
    .bind(isoTime(now), videoId, attempt)
    .run();
}

/** The video while this attempt is the one running it; null once the attempt is void. */
export function runningAttempt(db: Db, videoId: string, attempt: number): Promise<VideoRow | null> {
  return db
    .prepare(`SELECT * FROM videos WHERE id = ?1 AND status = 'processing' AND encode_attempt = ?2 AND ${LIVE}`)
    .bind(videoId, attempt)
    .first<VideoRow>();
}

/** Records that the attempt's encoder is alive; false once the attempt is void. */
export async function recordHeartbeat(db: Db, videoId: string, attempt: number, now: number): Promise<boolean> {
  const row = await db
    .prepare(
      `UPDATE videos SET encode_heartbeat_at = ?1
       WHERE id = ?2 AND status = 'processing' AND encode_attempt = ?3 AND ${LIVE}
       RETURNING id`,
    )
    .bind(isoTime(now), videoId, attempt)
    .first();
  return row !== null;
}

/** What an attempt ends with: ready with its outputs, errored, or back to `uploaded` for another attempt. */
export type Outcome =
  | {
      status: "ready";
      duration: number;
      width: number;
      height: number;
      renditions: Rendition[];
      mp4: boolean;
    }
  | { status: "errored"; code: "invalid_source" | "encoding_failed"; message: string }
  | { status: "uploaded" };

/**
 * Ends this attempt, if it is still the running one (and, for a takeover, still silent since
 * `silentSince`): the video's new state and, for ready or errored, its event, in one batch, so the
 * event exists exactly when the change does (once per video and type). `event` builds the event
 * from the row as it will be. Null when the attempt was void already.
 */
export async function endAttempt(
  db: Db,
  row: VideoRow,
  outcome: Outcome,
  now: number,
  event: (after: VideoRow) => { id: string; event: VideoOutcomeEvent } | null,
  silentSince?: string,
): Promise<VideoRow | null> {
  const at = isoTime(now);
  const columns = columnsOf(outcome, row.encode_attempt);
  const after: VideoRow = { ...row, ...columns, encode_heartbeat_at: null, updated_at: at };
  const names = Object.keys(columns);
  const update = db
    .prepare(
      `UPDATE videos SET ${names.map((name, index) => `${name} = ?${index + 5}`).join(", ")},
         encode_heartbeat_at = NULL, updated_at = ?1
       WHERE id = ?2 AND status = 'processing' AND encode_attempt = ?3
         AND (?4 IS NULL OR encode_heartbeat_at < ?4) AND ${LIVE}
       RETURNING *`,
    )
    .bind(at, row.id, row.encode_attempt, silentSince ?? null, ...Object.values(columns));
  const recorded = event(after);
  if (!recorded) return update.first<VideoRow>();
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

function columnsOf(outcome: Outcome, attempt: number): Partial<VideoRow> {
  switch (outcome.status) {
    case "ready":
      return {
        status: "ready",
        duration: outcome.duration,
        width: outcome.width,
        height: outcome.height,
        renditions: JSON.stringify(outcome.renditions),
        output_attempt: attempt,
        has_mp4: outcome.mp4 ? 1 : 0,
      };
    case "errored":
      return { status: "errored", error_code: outcome.code, error_message: outcome.message };
    case "uploaded":
      return { status: "uploaded" };
  }
}

/** Attempts whose encoder has not been heard from since `before`: taken over by the sweeper. */
export function silentAttempts(db: Db, before: string, limit: number): Promise<VideoRow[]> {
  return stale(db, "processing", "encode_heartbeat_at", before, limit);
}

/** Uploaded videos no attempt has started since `before`: their queue message was lost, or every encoder was busy. */
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

/** Where a video stands now, whatever its state (null once its row is gone). */
export function videoState(
  db: Db,
  videoId: string,
): Promise<Pick<VideoRow, "status" | "encode_attempt" | "output_attempt" | "deleted_at"> | null> {
  return db
    .prepare("SELECT status, encode_attempt, output_attempt, deleted_at FROM videos WHERE id = ?")
    .bind(videoId)
    .first();
}
