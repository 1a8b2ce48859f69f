import { z } from "zod";
import { logError } from "../lib/log";
import { consumeEach, logDeadLetters, RetryLater } from "../lib/queue";
import { CanonicalUlidSchema } from "../lib/ulid";
import { type PipelineDeps, startAttempt } from "./attempts";

export const ENCODE_QUEUE = "video-encodings";
export const ENCODE_DEAD_LETTERS = "video-encodings-dlq";

/** An uploaded video to encode. The video's row is the record of that; a lost message is sent again by the sweeper. */
const EncodeMessageSchema = z.strictObject({ projectId: CanonicalUlidSchema, videoId: CanonicalUlidSchema });
export type EncodeMessage = z.infer<typeof EncodeMessageSchema>;

export function sendEncode(queue: Queue, message: EncodeMessage): Promise<unknown> {
  return queue.send(EncodeMessageSchema.parse(message));
}

/**
 * Queues a video that has just become uploaded for encoding. A send that fails is logged, not
 * thrown: the upload is complete, and the sweeper sends the message of a video left uploaded.
 */
export async function queueEncoding(queue: Queue, video: { project_id: string; id: string }): Promise<void> {
  try {
    await sendEncode(queue, { projectId: video.project_id, videoId: video.id });
  } catch (error) {
    logError("encode: queue send (the sweeper sends it again)", error, { videoId: video.id });
  }
}

/** How long a message waits before it asks a busy encoder again. */
const BUSY_DELAY_SECONDS = 5;

/**
 * The encodings queue's handler: starts each video's next attempt. A busy encoder (locally there is
 * one, running one job at a time) has the message sent again a little later; an error retries it,
 * then to the dead-letter queue, where the sweeper's look at uploaded videos takes over.
 */
export function consumeEncodes(batch: MessageBatch<unknown>, deps: PipelineDeps): Promise<void> {
  return consumeEach(
    batch,
    EncodeMessageSchema,
    { malformed: "encode message malformed", failed: "encode: start" },
    async (message) => {
      if ((await startAttempt(deps, message)) === "busy") throw new RetryLater(BUSY_DELAY_SECONDS);
    },
  );
}

/** The dead-letter queue: the video is still `uploaded` in D1, so the sweeper starts it. */
export function consumeDeadEncodes(batch: MessageBatch<unknown>): void {
  logDeadLetters(batch, "encode message gave up; the sweep takes over");
}
