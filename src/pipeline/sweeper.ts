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
  let takenOver = 0;
  for (const row of silent) {
    // If the encoder is still there (only its reports were lost), it stops; if it is gone, nothing happens.
    await deps.encoder
      .cancel(row.id)
      .catch((error) => logError("encoding takeover: cancel", error, { videoId: row.id }));
    const ended = await endWith(
      deps,
      row,
      { status: "failed", code: "encoding_failed", message: "The encoder stopped reporting." },
      { silentSince: cutoff },
      now,
    );
    if (ended) takenOver += 1;
  }
  const waiting = await waitingEncodes(deps.db, isoTime(now - RESEND_AFTER_MS), BATCH);
  for (const row of waiting) await deps.requeue({ projectId: row.project_id, videoId: row.id });
  return { takenOver, resent: waiting.length };
}
