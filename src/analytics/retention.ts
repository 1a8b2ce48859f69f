import type { Db } from "../lib/db";
import { drain } from "../lib/drain";
import { DAY } from "../lib/time";
import { deleteViewsStartedBefore } from "./queries";

/**
 * A view's state is kept two days after its first beacon: far longer than a view plays, so every
 * beacon it sends finds it (a beacon of a view past that would count as a new view). The rollups
 * it fed stay.
 */
export const VIEW_RETENTION_MS = 2 * DAY;

/** Deletes the state of views started more than two days ago, in bounded batches. */
export function deleteExpiredViews(db: Db, now: number = Date.now()): Promise<number> {
  return drain((limit) => deleteViewsStartedBefore(db, now - VIEW_RETENTION_MS, limit));
}
