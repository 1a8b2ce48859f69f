import { z } from "zod";
import { logError } from "../lib/log";
import { parseUlid } from "../lib/ulid";
import { type PipelineDeps, startAttempt } from "./attempts";

export const ENCODE_QUEUE = "video-encodings";
export const ENCODE_DEAD_LETTERS = "video-encodings-dlq";

const Ulid = z.string().refine((text) => parseUlid(text) === text, "not a canonical ULID");

/** An uploaded video to encode. The video's row is the record of that; a lost message is sent again by the sweeper. */
const EncodeMessageSchema = z.strictObject({ projectId: Ulid, videoId: Ulid });
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
 * one, running one job at a time) sends the message again a little later; an error retries it with
 * a growing delay, then to the dead-letter queue, where the sweeper's look at uploaded videos takes over.
 */
export async function consumeEncodes(batch: MessageBatch<unknown>, deps: PipelineDeps): Promise<void> {
  await Promise.all(
    batch.messages.map(async (message) => {
      const parsed = EncodeMessageSchema.safeParse(message.body);
      if (!parsed.success) {
        logError("encode message malformed", parsed.error.message, { messageId: message.id });
        message.ack();
        return;
      }
      try {
        const started = await startAttempt(deps, parsed.data);
        if (started === "busy") message.retry({ delaySeconds: BUSY_DELAY_SECONDS });
        else message.ack();
      } catch (error) {
        logError("encode: start", error, { messageId: message.id, attempts: message.attempts });
        message.retry({ delaySeconds: Math.min(60, 2 ** message.attempts) });
      }
    }),
  );
}

/** The dead-letter queue: the video is still `uploaded` in D1, so the sweeper starts it; the message is logged. */
export function consumeDeadEncodes(batch: MessageBatch<unknown>): void {
  for (const message of batch.messages) {
    logError("encode message gave up; the sweep takes over", JSON.stringify(message.body), { messageId: message.id });
    message.ack();
  }
}
