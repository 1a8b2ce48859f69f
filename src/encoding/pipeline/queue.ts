import { z } from "zod";
import { logError } from "../../lib/log";
import { consumeEach, logDeadLetters } from "../../lib/queue";
import { CanonicalUlidSchema } from "../../lib/ulid";
import { coordinatorOf } from "./coordinator-stub";

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
 * thrown: the upload is complete, and the sweeper starts the encoding of a video left uploaded.
 */
export async function queueEncoding(queue: Queue, video: { project_id: string; id: string }): Promise<void> {
  try {
    await sendEncode(queue, { projectId: video.project_id, videoId: video.id });
  } catch (error) {
    logError("encode: queue send (the sweeper starts it)", error, { videoId: video.id });
  }
}

/**
 * The encodings queue's handler: hands each video to its coordinator (coordinator.ts), which
 * takes it from there; starting twice is harmless. An error retries the message, then sends it to
 * the dead-letter queue, where the sweeper's look at uploaded videos takes over.
 */
export function consumeEncodes(batch: MessageBatch<unknown>, env: Env): Promise<void> {
  return consumeEach(
    batch,
    EncodeMessageSchema,
    { malformed: "encode message malformed", failed: "encode: start" },
    (message) => coordinatorOf(env, message.videoId).start(message),
  );
}

/** The dead-letter queue: the video is still `uploaded` in D1, so the sweeper starts it. */
export function consumeDeadEncodes(batch: MessageBatch<unknown>): void {
  logDeadLetters(batch, "encode message gave up; the sweep takes over");
}
