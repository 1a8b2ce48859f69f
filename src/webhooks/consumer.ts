import { z } from "zod";
import { logError } from "../lib/log";
import { isoTime } from "../lib/time";
import { ulid } from "../lib/ulid";
import { DELIVERY_TIMEOUT_MS, RETRY_DELAYS_SECONDS } from "./model";
import { enqueue } from "./outbox";
import { type ClaimedAttempt, claimAttempt, finishAttempt, insertAttempts } from "./queries";
import { signatureHeaders } from "./signing";

const DeliveryMessageSchema = z.strictObject({ deliveryId: z.string().min(1).max(40) });

export type Deps = { db: D1Database; queue: Queue; fetch: typeof fetch };

/** A consumer holds an attempt this long: past the request's own timeout, with room to record it. */
const CLAIM_MS = DELIVERY_TIMEOUT_MS + 45_000;

type Outcome = { ok: boolean; responseStatus: number | null; error: string | null; durationMs: number };

async function post(deps: Deps, attempt: ClaimedAttempt, now: number): Promise<Outcome> {
  const headers = {
    "content-type": "application/json",
    "user-agent": "video-hosting-webhooks/1",
    ...(await signatureHeaders(attempt.secret, attempt.event_id, Math.floor(now / 1000), attempt.payload)),
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
      error: ok ? null : `HTTP ${response.status}`,
      durationMs: Date.now() - started,
    };
  } catch (error) {
    const timedOut = error instanceof Error && (error.name === "TimeoutError" || error.name === "AbortError");
    const reason = timedOut ? `no answer within ${DELIVERY_TIMEOUT_MS / 1000} s` : `request failed: ${String(error)}`;
    return { ok: false, responseStatus: null, error: reason.slice(0, 500), durationMs: Date.now() - started };
  }
}

/**
 * Delivers one attempt. A failure is recorded on the attempt, and the next attempt is written and
 * sent to the queue with its delay, until the schedule runs out. Infrastructure errors are
 * thrown, for the queue's own retries and then its dead-letter queue.
 */
export async function deliver(deps: Deps, deliveryId: string, now: number = Date.now()): Promise<void> {
  const attempt = await claimAttempt(deps.db, deliveryId, now, CLAIM_MS);
  if (!attempt) return; // done already, or another consumer holds it
  const outcome = await post(deps, attempt, now);
  const finished = Date.now();
  const delay = outcome.ok ? undefined : RETRY_DELAYS_SECONDS[attempt.attempt - 1];
  const nextRetryAt = delay === undefined ? null : isoTime(finished + delay * 1000);
  const record = finishAttempt(
    deps.db,
    attempt.id,
    { state: outcome.ok ? "succeeded" : "failed", ...outcome, nextRetryAt },
    finished,
  );
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
  await deps.db.batch([record, insertAttempts(deps.db, [next], finished)]);
  await enqueue(deps.queue, [next.id], delay);
}

/** The queue handler: one attempt per message. */
export async function consumeDeliveries(batch: MessageBatch<unknown>, deps: Deps): Promise<void> {
  for (const message of batch.messages) {
    const parsed = DeliveryMessageSchema.safeParse(message.body);
    if (!parsed.success) {
      // It can never succeed: say so in the log and drop it rather than retry it.
      logError("webhook message malformed", parsed.error.message, { messageId: message.id });
      message.ack();
      continue;
    }
    try {
      await deliver(deps, parsed.data.deliveryId);
      message.ack();
    } catch (error) {
      logError("webhook delivery", error, { messageId: message.id });
      message.retry();
    }
  }
}
