import { z } from "zod";
import { logError } from "../lib/log";
import { CanonicalUlidSchema } from "../lib/ulid";

/**
 * The encodings queue (wrangler.toml), the inbox of a video's coordinator: its name, messages and
 * sends. An uploaded video to encode, sent wherever a video becomes `uploaded` (an upload's
 * completion, an import, a clip); a caption track whose speech is to be heard
 * (src/captions/generation.ts); or an added audio track to make or let go (src/audio-tracks/).
 * Consumed by the encoding pipeline (src/encoding/pipeline/queue.ts).
 */

export const ENCODE_QUEUE = "video-encodings";
export const ENCODE_DEAD_LETTERS = "video-encodings-dlq";

/** An uploaded video to encode. The video's row is the record of that; a lost message is sent again by the sweeper. */
export const EncodeMessageSchema = z.strictObject({ projectId: CanonicalUlidSchema, videoId: CanonicalUlidSchema });
export type EncodeMessage = z.infer<typeof EncodeMessageSchema>;

/**
 * A generated caption track to hear (docs/generated-captions.md): its language (the track's BCP 47
 * tag), its generation, the engine's code for the language and where it is heard.
 */
export const HearMessageSchema = EncodeMessageSchema.extend({
  hear: z.strictObject({
    language: z.string().regex(/^[A-Za-z0-9-]{2,35}$/),
    generation: CanonicalUlidSchema,
    heardAs: z.string().regex(/^[a-z]{2,3}$/),
    recognizer: z.enum(["encoder", "worker"]),
  }),
});
export type HearMessage = z.infer<typeof HearMessageSchema>;

/**
 * An added audio track of the video changed (docs/audio-tracks.md): put (`generation`, the PUT's)
 * or deleted (the generation that went). The coordinator reads the track's row for what to make:
 * the generation it names now, or none.
 */
export const AudioMessageSchema = EncodeMessageSchema.extend({
  audio: z.strictObject({ language: z.string().regex(/^[A-Za-z0-9-]{2,35}$/), generation: CanonicalUlidSchema }),
});
export type AudioMessage = z.infer<typeof AudioMessageSchema>;

/** Any of the messages: the one schema the queue's consumer reads. */
export const CoordinatorMessageSchema = z.union([HearMessageSchema, AudioMessageSchema, EncodeMessageSchema]);

export function sendEncode(queue: Queue, message: EncodeMessage): Promise<unknown> {
  return queue.send(EncodeMessageSchema.parse(message));
}

export function sendHear(queue: Queue, message: HearMessage): Promise<unknown> {
  return queue.send(HearMessageSchema.parse(message));
}

export function sendAudio(queue: Queue, message: AudioMessage): Promise<unknown> {
  return queue.send(AudioMessageSchema.parse(message));
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
