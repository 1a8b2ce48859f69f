import { abortUploads } from "./delete";
import { pendingAborts } from "./queries";

const BATCH = 100;

/** Retries the aborts of multipart uploads that a delete could not abort at the time. */
export async function sweepPendingAborts(env: Env): Promise<void> {
  const rows = await pendingAborts(env.DB, BATCH);
  await abortUploads({ db: env.DB, media: env.MEDIA }, rows);
}
