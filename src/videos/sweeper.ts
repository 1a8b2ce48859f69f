import { cleanUpDeleted } from "./delete";
import { pendingCleanups } from "./queries";

const BATCH = 100;

/** Retries the R2 clean-up of deleted videos that a delete could not finish at the time. */
export async function sweepDeletedVideos(env: Env): Promise<void> {
  await cleanUpDeleted({ db: env.DB, media: env.MEDIA }, await pendingCleanups(env.DB, BATCH));
}
