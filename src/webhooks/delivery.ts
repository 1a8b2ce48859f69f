import type { Db } from "../lib/db";
import { logError } from "../lib/log";
import { type TargetRules, targetProblem } from "../lib/safe-targets";
import { isoTime, MINUTE } from "../lib/time";
import { ulid } from "../lib/ulid";
import {
  type ClaimedAttempt,
  claimAttempt,
  finishAttemptStatement,
  giveUpAttemptStatement,
  insertAttemptsStatement,
} from "./attempt-queries";
import { type DeliveryMessage, enqueue } from "./delivery-queue";
import { disableGoneStatement } from "./endpoint-queries";
import { DELIVERY_TIMEOUT_MS, type DeliveryError, RETRY_DELAYS_SECONDS } from "./model";
import { signatureHeaders } from "./signing";

export type Deps = { db: Db; queue: Queue; fetch: typeof fetch; targets: TargetRules };

/** A consumer holds an attempt this long: past the request's own timeout, with room to record it. */
const CLAIM_MS = DELIVERY_TIMEOUT_MS + 45_000;

type Outcome = {
  ok: boolean;
  responseStatus: number | null;
  error: DeliveryError | null;
  durationMs: number | null;
  /** Whether a later attempt may succeed where this one failed. */
  retryable: boolean;
};

const refused = (error: DeliveryError): Outcome => ({
  ok: false,
  responseStatus: null,
  error,
  durationMs: null,
  retryable: false,
});

/** The secrets that sign an attempt now: the current one, and a rotated-out one while it overlaps. */
function signingSecrets(attempt: ClaimedAttempt, now: number): string[] {
  const overlapping =
    attempt.previous_secret !== null &&
    attempt.previous_secret_until !== null &&
    Date.parse(attempt.previous_secret_until) > now;
  return overlapping ? [attempt.secret, attempt.previous_secret as string] : [attempt.secret];
}

async function post(deps: Deps, attempt: ClaimedAttempt, now: number): Promise<Outcome> {
  const headers = {
    "content-type": "application/json",
    "user-agent": "video-hosting-webhooks/1",
    ...(await signatureHeaders(
      signingSecrets(attempt, now),
      attempt.event_id,
      Math.floor(now / 1000),
      attempt.payload,
    )),
  };
  const started = Date.now();
  try {
    const response = await deps.fetch(attempt.url, {
      method: "POST",
      headers,
      body: attempt.payload,
      redirect: "manual",
      signal: AbortSignal.timeout(DELIVERY_TIMEOUT_MS),
    });
    await response.body?.cancel();
    const ok = response.status >= 200 && response.status < 300;
    return {
      ok,
      responseStatus: response.status,
      error: ok ? null : "http_status",
      durationMs: Date.now() - started,
      retryable: response.status !== 410,
    };
  } catch (error) {
    const timedOut = error instanceof Error && (error.name === "TimeoutError" || error.name === "AbortError");
    // The exception's own words stay in the log; the attempt records only the category.
    logError("webhook post", error, { deliveryId: attempt.id, endpointId: attempt.endpoint_id });
    return {
      ok: false,
      responseStatus: null,
      error: timedOut ? "timeout" : "connection_failed",
      durationMs: Date.now() - started,
      retryable: true,
    };
  }
}

/**
 * Sends the attempt, unless its endpoint, its project, its account or its URL no longer allow it.
 * An endpoint of a deleted project is as good as disabled: its attempt fails as `endpoint_disabled`
 * (not retried, so nothing re-sends it until the purge deletes it).
 */
async function send(deps: Deps, attempt: ClaimedAttempt, now: number): Promise<Outcome> {
  if (attempt.endpoint_enabled !== 1 || attempt.project_live !== 1) return refused("endpoint_disabled");
  if (attempt.account_approved !== 1) return refused("account_suspended");
  if (targetProblem(attempt.url, deps.targets)) return refused("invalid_target");
  return post(deps, attempt, now);
}

/**
 * Delivers one attempt. A failure is recorded on the attempt, and the next attempt is written and
 * sent to the queue with its delay, until the schedule runs out; a 410 disables the endpoint
 * instead. Infrastructure errors are thrown, for the queue's own retries and then its
 * dead-letter queue.
 */
export async function deliver(deps: Deps, deliveryId: string, now: number = Date.now()): Promise<void> {
  const attempt = await claimAttempt(deps.db, deliveryId, now, CLAIM_MS);
  if (!attempt) return; // done already, or another consumer holds it
  const { retryable, ...outcome } = await send(deps, attempt, now);
  const finished = Date.now();
  const delay = outcome.ok || !retryable ? undefined : RETRY_DELAYS_SECONDS[attempt.attempt - 1];
  const nextRetryAt = delay === undefined ? null : isoTime(finished + delay * 1000);
  const record = finishAttemptStatement(
    deps.db,
    attempt.id,
    { state: outcome.ok ? "succeeded" : "failed", ...outcome, nextRetryAt },
    finished,
  );
  if (outcome.responseStatus === 410) {
    await deps.db.batch([record, disableGoneStatement(deps.db, attempt.endpoint_id)]);
    return;
  }
  if (delay === undefined || nextRetryAt === null) {
    await record.run();
    return;
  }
  const next = {
    id: ulid(finished),
    endpointId: attempt.endpoint_id,
    eventId: attempt.event_id,
    eventType: attempt.event_type,
    attempt: attempt.attempt + 1,
    dueAt: nextRetryAt,
  };
  await deps.db.batch([record, insertAttemptsStatement(deps.db, [next], finished)]);
  await enqueue(
    deps.queue,
    [{ deliveryId: next.id, endpointId: next.endpointId, projectId: attempt.project_id }],
    delay,
  );
}

/** Infrastructure failures (D1, the queue) a message survives before its attempt is given up. */
export const MAX_FAILURES = 5;
/** A failed message comes back after this, when the claim its failed run left has expired. */
export const FAILURE_DELAY_SECONDS = (CLAIM_MS + MINUTE) / 1000;

/**
 * Delivers a message's attempt, as a lane does. The message was acknowledged when the lane took
 * it, so the queue's own retries are behind it: an infrastructure failure sends the message again
 * later, counted, and the attempt is given up (`gave_up`) after `MAX_FAILURES`. If even that
 * fails, the attempt is still pending in D1 and the scheduled sweep sends it again.
 */
export async function deliverOrReschedule(deps: Deps, message: DeliveryMessage): Promise<void> {
  try {
    await deliver(deps, message.deliveryId);
  } catch (error) {
    const failures = (message.failures ?? 0) + 1;
    logError("webhook delivery", error, { deliveryId: message.deliveryId, failures });
    try {
      if (failures >= MAX_FAILURES) await giveUpAttemptStatement(deps.db, message.deliveryId, Date.now()).run();
      else await enqueue(deps.queue, [{ ...message, failures }], FAILURE_DELAY_SECONDS);
    } catch (again) {
      logError("webhook delivery: rescheduling failed, the sweep takes over", again, {
        deliveryId: message.deliveryId,
      });
    }
  }
}
