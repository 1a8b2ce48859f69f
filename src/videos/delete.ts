import { logError } from "../lib/log";
import { ulid } from "../lib/ulid";
import { publishEvents } from "../webhooks/outbox";
import { completionInFlight, type VideoRow } from "./model";
import { clearCleanedUp, deleteStatements, findVideos } from "./queries";

export type ItemCode = "video_not_found" | "upload_completion_in_progress" | "internal_error" | "not_attempted";
export type ItemOutcome = { id: string; ok: true } | { id: string; ok: false; code: ItemCode };

export type Store = { db: D1Database; media: R2Bucket; queue: Queue };

export function storeOf(env: Env): Store {
  return { db: env.DB, media: env.MEDIA, queue: env.WEBHOOK_QUEUE };
}

export type DeleteOptions = {
  now?: number;
  /**
   * Runs work that may finish after the response (the Worker's `waitUntil`). The R2 clean-up
   * goes there: the delete has already closed the upload session and hidden the video, so it need
   * not hold the caller up. Without it, it runs inline.
   */
  background?: (task: Promise<void>) => void;
};

/** Marks `ids[from]` internal_error and every id after it not_attempted: processing stops there. */
export function stopAt(ids: string[], from: number): ItemOutcome[] {
  return ids.slice(from).map((id, i) => ({ id, ok: false, code: i === 0 ? "internal_error" : "not_attempted" }));
}

/** Why a video the delete did not change was refused, read after the fact. */
function refusal(row: VideoRow | undefined, now: number): ItemCode {
  return row && completionInFlight(row, now) ? "upload_completion_in_progress" : "video_not_found";
}

/**
 * Deletes videos of a project: the one rule behind `DELETE /v1/videos/{id}` and a bulk `delete`.
 * Each deletion is a soft delete written in one batch with its video.deleted event; from then on
 * the upload session takes no parts and no completion. Then the R2 multipart uploads are aborted
 * and custom thumbnails deleted (see `background`). `ids` are canonical and distinct, in request
 * order.
 *
 * Happy path: one read and one batch of two statements for all ids, then one write after the
 * aborts. When the batch fails, the ids are retried one at a time to find the failing one: it
 * reports internal_error and every later id not_attempted.
 */
export async function deleteVideos(
  store: Store,
  projectId: string,
  ids: string[],
  options: DeleteOptions = {},
): Promise<ItemOutcome[]> {
  const now = options.now ?? Date.now();
  let rows: Map<string, VideoRow>;
  try {
    rows = await findVideos(store.db, projectId, ids);
  } catch (error) {
    logError("delete: read videos", error, { projectId });
    return stopAt(ids, 0);
  }

  const outcomes: ItemOutcome[] = [];
  const candidates: string[] = [];
  for (const id of ids) {
    const row = rows.get(id);
    if (!row || completionInFlight(row, now)) outcomes.push({ id, ok: false, code: refusal(row, now) });
    else {
      outcomes.push({ id, ok: true });
      candidates.push(id);
    }
  }
  if (candidates.length === 0) return outcomes;

  // The rows as the delete left them: what the R2 clean-up works from, never the earlier read.
  const applied = new Map<string, VideoRow>();
  const eventIds: Record<string, string> = {};
  const remove = async (batch: string[]) => {
    for (const id of batch) eventIds[id] = ulid(now);
    const [update] = await store.db.batch<VideoRow>(deleteStatements(store.db, projectId, batch, eventIds, now));
    for (const row of update?.results ?? []) applied.set(row.id, row);
  };
  let attempted = candidates;
  try {
    await remove(candidates);
  } catch (error) {
    // The batch is atomic, so nothing was applied: go one by one to find the failing id.
    logError("delete: batch", error, { projectId, count: candidates.length });
    for (const [n, id] of candidates.entries()) {
      try {
        await remove([id]);
      } catch (itemError) {
        logError("delete: item", itemError, { projectId, videoId: id });
        const index = ids.indexOf(id);
        outcomes.splice(index, outcomes.length - index, ...stopAt(ids, index));
        attempted = candidates.slice(0, n);
        break;
      }
    }
  }

  // An attempted id the delete did not change lost a race: deleted, or a completion started.
  const raced = attempted.filter((id) => !applied.has(id));
  if (raced.length > 0) {
    const later = Date.now();
    const current = await findVideos(store.db, projectId, raced).catch(() => new Map<string, VideoRow>());
    for (const id of raced) outcomes[ids.indexOf(id)] = { id, ok: false, code: refusal(current.get(id), later) };
  }

  if (applied.size === 0) return outcomes;
  const deleted = [...applied.values()];
  const published = deleted.map((row) => eventIds[row.id] as string);
  const followUp = async () => {
    // The events are safe in the outbox already; publishing now only saves the sweep's wait.
    await publishEvents({ db: store.db, queue: store.queue }, { ids: published }).catch((error) =>
      logError("delete: publish events", error, { count: published.length }),
    );
    await cleanUpDeleted(store, deleted);
  };
  if (options.background) {
    // Started on a later turn, so the response leaves before the follow-up's subrequests do.
    options.background(new Promise((resolve) => setTimeout(resolve, 0)).then(followUp));
  } else await followUp();
  return outcomes;
}

/**
 * Removes what deleted videos leave in R2: aborts their multipart uploads and deletes their custom
 * thumbnails, then forgets the videos that are clean. One that fails stays recorded, and the
 * scheduled sweeper tries it again.
 */
export async function cleanUpDeleted(store: Pick<Store, "db" | "media">, rows: VideoRow[]): Promise<void> {
  const pending = rows.filter((row) => row.upload_r2_id !== null || row.custom_thumbnail_key !== null);
  if (pending.length === 0) return;
  const settled = await Promise.allSettled(pending.map((row) => cleanUpOne(store.media, row)));
  const clean = pending.filter((row, i) => {
    const result = settled[i];
    if (result?.status === "fulfilled") return true;
    logError("delete: clean up R2", result?.reason, { videoId: row.id });
    return false;
  });
  try {
    await clearCleanedUp(
      store.db,
      clean.map((row) => row.id),
    );
  } catch (error) {
    logError("delete: record clean-up", error, { count: clean.length });
  }
}

async function cleanUpOne(media: R2Bucket, row: VideoRow): Promise<void> {
  if (row.custom_thumbnail_key) await media.delete(row.custom_thumbnail_key);
  await abortUpload(media, row);
}

/** Aborts the video's R2 multipart upload, if it has one; one already gone is not an error. */
export async function abortUpload(media: R2Bucket, row: Pick<VideoRow, "source_key" | "upload_r2_id">) {
  if (!row.upload_r2_id) return;
  try {
    await media.resumeMultipartUpload(row.source_key, row.upload_r2_id).abort();
  } catch (error) {
    // Already completed or aborted: nothing is left to abort.
    if (!/NoSuchUpload|10024/.test(String(error))) throw error;
  }
}
