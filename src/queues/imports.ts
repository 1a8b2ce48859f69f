import { z } from "zod";
import { CanonicalUlidSchema } from "../lib/ulid";

/**
 * The imports queue (wrangler.toml): its name, message and send, for its producers (a video's
 * creation from a URL, an audio track's PUT by URL, the sweep) and its consumer
 * (src/imports/consumer.ts, which hands each import to its own object).
 */

export const IMPORT_QUEUE = "video-imports";
export const IMPORT_DEAD_LETTERS = "video-imports-dlq";

/** An added audio track of a video (docs/audio-tracks.md): its language and the generation (PUT) to fetch the file of. */
export const TrackRefSchema = z.strictObject({
  language: z.string().regex(/^[A-Za-z0-9-]{2,35}$/),
  generation: CanonicalUlidSchema,
});
export type TrackRef = z.infer<typeof TrackRefSchema>;

/**
 * A file to fetch: a video's own source, or, with `track`, an added audio track's file. Its row is
 * the record (the video importing, the track processing with its URL); the sweeper sends a lost
 * message again.
 */
export const ImportMessageSchema = z.strictObject({
  projectId: CanonicalUlidSchema,
  videoId: CanonicalUlidSchema,
  track: TrackRefSchema.optional(),
});
export type ImportMessage = z.infer<typeof ImportMessageSchema>;

/** The name of an import's object (src/imports/object.ts): its video's id, or its track's generation beside it. */
export function importName(message: Pick<ImportMessage, "videoId" | "track">): string {
  return message.track ? `${message.videoId}/audio/${message.track.generation}` : message.videoId;
}

export function sendImport(queue: Queue, message: ImportMessage): Promise<unknown> {
  return queue.send(ImportMessageSchema.parse(message));
}
