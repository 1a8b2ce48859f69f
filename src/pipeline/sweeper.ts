import { logError } from "../lib/log";
import { isoTime } from "../lib/time";
import { endWith, type PipelineDeps, silenceCutoff } from "./attempts";
import { silentAttempts, waitingEncodes } from "./queries";

const BATCH = 50;
/** An uploaded video no attempt has started for this long has lost its queue message: it is sent again. */
const RESEND_AFTER_MS = 2 * 60_000;

/**
 * The pipeline's part of the scheduled sweep: takes over attempts whose encoder went silent (a
 * failed attempt: retried, or errored after the last), and sends again the videos whose encode
 * message was lost. So no video stays `processing` without an encoder, nor `uploaded` forever.
 */
export async function sweepEncodings(
  deps: PipelineDeps,
  now: number = Date.now(),
): Promise<{ takenOver: number; resent: number }> {
  const cutoff = silenceCutoff(now);
  const silent = await silentAttempts(deps.db, cutoff, BATCH);
  const failure = { status: "failed", code: "encoding_failed", message: "The encoder stopped reporting." } as const;
  const takeovers = await Promise.allSettled(
    silent.map((row) => endWith(deps, row, failure, { silentSince: cutoff }, now)),
  );
  const waiting = await waitingEncodes(deps.db, isoTime(now - RESEND_AFTER_MS), BATCH);
  const resends = await Promise.allSettled(
    waiting.map((row) => deps.requeue({ projectId: row.project_id, videoId: row.id })),
  );
  for (const settled of [...takeovers, ...resends]) {
    if (settled.status === "rejected") logError("encoding sweep", settled.reason);
  }
  return {
    takenOver: takeovers.filter((settled) => settled.status === "fulfilled" && settled.value).length,
    resent: resends.filter((settled) => settled.status === "fulfilled").length,
  };
}
