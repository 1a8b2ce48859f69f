import type { Context } from "hono";
import type { TenantEnv } from "../auth/context";
import type { Db } from "../lib/db";
import { logError } from "../lib/log";
import { changingPlayback } from "../lib/playback-cache";
import type { Tenant } from "../lib/tenant";
import { monotonicUlids } from "../lib/ulid";
import { sendDeletion } from "./deletion-queue";
import { completionInFlight, type ItemCode, type VideoRow } from "./model";
import { deleteVideosStatements, findVideos } from "./queries";

export type ItemOutcome = { id: string; ok: true } | { id: string; ok: false; code: ItemCode };

/** What a delete touches on the request's path: D1 (the request's session) and one queue send. */
export type Store = { db: Db; deletions: Queue };

export function storeOf<E extends TenantEnv>(c: Context<E>): Store {
  return { db: c.var.db, deletions: c.env.DELETION_QUEUE };
}

export type DeleteOptions = { now?: number };

/** Marks `ids[from]` internal_error and every id after it not_attempted: processing stops there. */
export function stopAt(ids: string[], from: number): ItemOutcome[] {
  return ids.slice(from).map((id, i) => ({ id, ok: false, code: i === 0 ? "internal_error" : "not_attempted" }));
}

/** Why a video the delete did not change was refused, read after the fact. */
function refusal(row: VideoRow | undefined, now: number): ItemCode {
  return row && completionInFlight(row, now) ? "upload_completion_in_progress" : "video_not_found";
}

/**
 * Deletes videos of a tenant (a video of its project in another mode is unknown to it): the one
 * rule behind `DELETE /v1/videos/{id}`, a bulk `delete`, a tus termination and the expiry of test
 * videos.
 * Each deletion is a soft delete written in one batch with its video.deleted event; from then on
 * the upload session takes no parts and no completion. The rest (publishing the events, aborting
 * the R2 multipart uploads, deleting custom thumbnails) is one message to the deletions queue,
 * whose consumer does it with the queue's retries (see `deletion-queue.ts`). `ids` are canonical and
 * distinct, in request order.
 *
 * Happy path: one batch of two statements for all ids, then one queue send; ids it could not
 * delete cost one read to say why. When the batch fails, the ids are retried one at a time to find
 * the failing one: it reports internal_error and every later id not_attempted.
 */
export async function deleteVideos(
  store: Store,
  tenant: Tenant,
  ids: string[],
  options: DeleteOptions = {},
): Promise<ItemOutcome[]> {
  const now = options.now ?? Date.now();
  const { projectId } = tenant;
  // Every id is tried: the delete statement itself skips what it may not delete (unknown, deleted
  // already, completion in flight), and only those are read afterwards to say why.
  const outcomes: ItemOutcome[] = ids.map((id) => ({ id, ok: true }));

  // The ids the delete statement changed.
  const applied = new Set<string>();
  const eventIds: Record<string, string> = {};
  const nextId = monotonicUlids();
  const remove = async (batch: string[]) => {
    for (const id of batch) eventIds[id] = nextId(now);
    // Their bytes are never served again from here, from this answer on (docs/playback-at-scale.md).
    const [update] = await changingPlayback(
      store.db.batch<{ id: string }>(deleteVideosStatements(store.db, tenant, batch, eventIds, now)),
      ([deleted]) => deleted?.results.map((row) => row.id) ?? null,
    );
    for (const row of update?.results ?? []) applied.add(row.id);
  };
  let attempted = ids;
  try {
    await remove(ids);
  } catch (error) {
    // The batch is atomic, so nothing was applied: go one by one to find the failing id.
    logError("delete: batch", error, { projectId, count: ids.length });
    for (const [n, id] of ids.entries()) {
      try {
        await remove([id]);
      } catch (itemError) {
        logError("delete: item", itemError, { projectId, videoId: id });
        const index = ids.indexOf(id);
        outcomes.splice(index, outcomes.length - index, ...stopAt(ids, index));
        attempted = ids.slice(0, n);
        break;
      }
    }
  }

  // An attempted id the delete did not change is unknown, deleted already, or mid-completion.
  const refused = attempted.filter((id) => !applied.has(id));
  if (refused.length > 0) {
    const later = Date.now();
    let current: Map<string, VideoRow> | null = null;
    try {
      current = await findVideos(store.db, tenant, refused);
    } catch (error) {
      logError("delete: read refused videos", error, { projectId, count: refused.length });
    }
    for (const id of refused) {
      outcomes[ids.indexOf(id)] = current
        ? { id, ok: false, code: refusal(current.get(id), later) }
        : { id, ok: false, code: "internal_error" };
    }
  }

  if (applied.size === 0) return outcomes;
  const videoIds = [...applied];
  try {
    await sendDeletion(store.deletions, {
      projectId,
      videoIds,
      eventIds: videoIds.map((id) => eventIds[id] as string),
    });
  } catch (error) {
    // The events and the clean-up are recorded in D1 already: the scheduled sweep does them.
    logError("delete: send follow-up", error, { count: videoIds.length });
  }
  return outcomes;
}
