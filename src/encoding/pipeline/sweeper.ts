import { logError } from "../../lib/log";
import { isoTime } from "../../lib/time";
import { coordinatorOf } from "./coordinator-stub";
import { silentEncodings, waitingEncodes } from "./queries";

const BATCH = 50;
/** An uploaded video no encoding has started for this long has lost its queue message: it is started again. */
const RESTART_AFTER_MS = 2 * 60_000;
/** A processing video whose coordinator has not recorded a heartbeat for this long is looked at again. */
const RESUME_AFTER_MS = 2 * 60_000;

/**
 * The pipeline's part of the scheduled sweep: starts again the videos whose encode message was
 * lost, and wakes the coordinators of encodings not heard from (their alarm lost with a restart,
 * say), which then take over their silent jobs. So no video stays `uploaded` or `processing`
 * without anyone working on it.
 */
export async function sweepEncodings(
  env: Env,
  now: number = Date.now(),
): Promise<{ resumed: number; restarted: number }> {
  const db = env.DB;
  const silent = await silentEncodings(db, isoTime(now - RESUME_AFTER_MS), BATCH);
  const resumed = await Promise.allSettled(silent.map((row) => coordinatorOf(env, row.id).resume()));
  const waiting = await waitingEncodes(db, isoTime(now - RESTART_AFTER_MS), BATCH);
  const restarted = await Promise.allSettled(
    waiting.map((row) => coordinatorOf(env, row.id).start({ projectId: row.project_id, videoId: row.id })),
  );
  for (const settled of [...resumed, ...restarted]) {
    if (settled.status === "rejected") logError("encoding sweep", settled.reason);
  }
  return {
    resumed: resumed.filter((settled) => settled.status === "fulfilled").length,
    restarted: restarted.filter((settled) => settled.status === "fulfilled").length,
  };
}
