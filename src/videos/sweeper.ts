import type { Position } from "../lib/cursor";
import { isoTime } from "../lib/time";
import { type CleanUpStore, cleanUpDeleted } from "./cleanup";
import { pendingCleanups } from "./cleanup-queries";
import { deleteVideos, type Store } from "./delete";
import { TEST_VIDEO_LIFETIME_MS } from "./model";
import { expiredTestVideos } from "./queries";

const BATCH = 100;

/** Retries the R2 clean-up of deleted videos that a delete could not finish at the time. */
export async function sweepDeletedVideos(store: CleanUpStore): Promise<void> {
  await cleanUpDeleted(store, await pendingCleanups(store.db, BATCH));
}

/** How much one run of the expiry sweep deletes at most: `batches` reads of `batch` videos. */
export type ExpiryLimits = { batch: number; batches: number };
const EXPIRY_LIMITS: ExpiryLimits = { batch: BATCH, batches: 10 };

/**
 * Deletes test videos 24 hours after their creation (docs/api-guide.md#test-mode-and-going-live), exactly as
 * `DELETE /v1/videos/{id}` deletes them: through `deleteVideos`, so each gets its video.deleted
 * event (to test endpoints only) and the same clean-up. Bounded: at most `limits.batches` batches
 * of `limits.batch` a run, oldest first; the next run goes on. A video whose upload completion is
 * in flight is refused for now and passed over, and deleted by a later run once its lease is over.
 * Returns how many it deleted.
 */
export async function sweepExpiredTestVideos(
  store: Store,
  now: number = Date.now(),
  limits: ExpiryLimits = EXPIRY_LIMITS,
): Promise<number> {
  const createdBefore = isoTime(now - TEST_VIDEO_LIFETIME_MS);
  let deleted = 0;
  let after: Position | null = null;
  for (let batch = 0; batch < limits.batches; batch++) {
    const rows = await expiredTestVideos(store.db, createdBefore, after, limits.batch);
    const byProject = new Map<string, string[]>();
    for (const row of rows) byProject.set(row.project_id, [...(byProject.get(row.project_id) ?? []), row.id]);
    for (const [projectId, ids] of byProject) {
      const outcomes = await deleteVideos(store, { projectId, mode: "test" }, ids, { now });
      deleted += outcomes.filter((outcome) => outcome.ok).length;
    }
    const last = rows.at(-1);
    if (!last || rows.length < limits.batch) break;
    after = { createdAt: last.created_at, id: last.id };
  }
  return deleted;
}
