import { z } from "zod";
import { CanonicalUlidSchema } from "../lib/ulid";

/**
 * The caption-generations queue (wrangler.toml): its name, messages and send, for its producer (a
 * video's coordinator, src/encoding/pipeline/) and its consumer (src/captions/generation-queue.ts).
 * The coordinator hears speech; what a track is made of it is the captions' own business, and the
 * queue is the one way between the two (the captions call the coordinator, never the reverse).
 */
export const CAPTIONS_QUEUE = "caption-generations";
export const CAPTIONS_DEAD_LETTERS = "caption-generations-dlq";

const Language = z.string().regex(/^[A-Za-z0-9-]{2,35}$/);

export const CaptionMessageSchema = z.discriminatedUnion("type", [
  /**
   * The video became playable: the tracks its creation asked to be generated are asked for now,
   * as if by `POST …/captions/{language}/generate` then.
   */
  z.strictObject({
    type: z.literal("playable"),
    projectId: CanonicalUlidSchema,
    videoId: CanonicalUlidSchema,
    languages: z.array(Language).min(1).max(5),
  }),
  /**
   * A generation is over: what was heard is in R2 under `wordsKey` (JSON words, times in seconds
   * of the video); or the video has no audio to hear (`silent`); or it could not be heard
   * (`failed`, with the reason in the API's words).
   */
  z.strictObject({
    type: z.literal("heard"),
    projectId: CanonicalUlidSchema,
    videoId: CanonicalUlidSchema,
    language: Language,
    generation: CanonicalUlidSchema,
    outcome: z.discriminatedUnion("kind", [
      z.strictObject({ kind: z.literal("words"), wordsKey: z.string().min(1).max(1024) }),
      z.strictObject({ kind: z.literal("silent") }),
      z.strictObject({ kind: z.literal("failed"), message: z.string().min(1).max(500) }),
    ]),
  }),
]);
export type CaptionMessage = z.infer<typeof CaptionMessageSchema>;

export function sendCaptionMessage(queue: Queue, message: CaptionMessage): Promise<unknown> {
  return queue.send(CaptionMessageSchema.parse(message));
}
