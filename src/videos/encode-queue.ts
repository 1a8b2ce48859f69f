import { z } from "zod";
import { logError } from "../lib/log";
import { CanonicalUlidSchema } from "../lib/ulid";

// The encodings queue's message, sent wherever a video becomes `uploaded` (an upload's completion,
// an import, a clip) and consumed by the encoding pipeline (src/encoding/pipeline/queue.ts).

/** An uploaded video to encode. The video's row is the record of that; a lost message is sent again by the sweeper. */
export const EncodeMessageSchema = z.strictObject({ projectId: CanonicalUlidSchema, videoId: CanonicalUlidSchema });
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
