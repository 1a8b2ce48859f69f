import { consumeEach, logDeadLetters } from "../../lib/queue";
import { EncodeMessageSchema } from "../../videos/encode-queue";
import { coordinatorOf } from "./coordinator-stub";

export const ENCODE_QUEUE = "video-encodings";
export const ENCODE_DEAD_LETTERS = "video-encodings-dlq";

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
