import { z } from "zod";
import { logError } from "../lib/log";
import { consumeEach, logDeadLetters } from "../lib/queue";
import { CanonicalUlidSchema } from "../lib/ulid";
import { type CleanUpStore, cleanUpDeleted } from "./cleanup";
import { deletedWithLeftovers } from "./cleanup-queries";

export const DELETION_QUEUE = "video-deletions";
export const DELETION_DEAD_LETTERS = "video-deletions-dlq";

/** One delete's follow-up: the project, the videos it deleted and the ids of their video.deleted events. */
const DeletionMessageSchema = z.strictObject({
  projectId: CanonicalUlidSchema,
  videoIds: z.array(CanonicalUlidSchema).min(1).max(100),
  eventIds: z.array(CanonicalUlidSchema).max(100),
});
export type DeletionMessage = z.infer<typeof DeletionMessageSchema>;

export function sendDeletion(queue: Queue, message: DeletionMessage): Promise<unknown> {
  return queue.send(DeletionMessageSchema.parse(message));
}

/**
 * What the follow-up needs: D1, R2 and the tus uploads' objects (`CleanUpStore`), the publisher of
 * the events (`publishEvents` with its subscribers), and what stops a deleted video's encoding and
 * its import (both capabilities sit above videos, so the follow-up takes them rather than importing
 * them).
 */
export type DeletionDeps = CleanUpStore & {
  publish: (eventIds: string[]) => Promise<void>;
  cancelEncoding: (videoId: string) => Promise<void>;
  stopImport: (videoId: string) => Promise<void>;
};

/**
 * What a delete leaves for later, done off the request's path: stop the imports in flight (their
 * origins' connections closed first of all, so nothing more arrives), publish the video.deleted
 * events, stop the encodings in flight, abort the R2 multipart uploads and delete every object the
 * videos stored. Each step is safe to repeat; a failure throws, so the queue retries the message.
 */
export async function finishDeletion(deps: DeletionDeps, message: DeletionMessage): Promise<void> {
  const rows = await deletedWithLeftovers(deps.db, message.videoIds);
  await Promise.all(
    rows
      .filter((row) => row.status === "importing")
      .map((row) =>
        deps.stopImport(row.id).catch((error) => logError("delete: stop import", error, { videoId: row.id })),
      ),
  );
  await deps.publish(message.eventIds);
  // An encoder that misses this stops at its next call back (410), and what it stores after the
  // clean-up below is removed as it arrives (the segment route asks the coordinator again).
  await Promise.all(
    rows
      // A ready video's coordinator may still make frames for viewers: those stop too.
      .filter((row) => row.status === "processing" || row.status === "uploaded" || row.status === "ready")
      .map((row) =>
        deps.cancelEncoding(row.id).catch((error) => logError("delete: cancel encoding", error, { videoId: row.id })),
      ),
  );
  const failed = await cleanUpDeleted(deps, rows);
  if (failed > 0) throw new Error(`${failed} of the deleted videos' R2 clean-ups failed`);
}

/** The deletions queue's handler: one delete per message, retried by the queue on failure. */
export function consumeDeletions(
  batch: MessageBatch<unknown>,
  depsFor: (projectId: string) => DeletionDeps,
): Promise<void> {
  return consumeEach(
    batch,
    DeletionMessageSchema,
    { malformed: "deletion message malformed", failed: "deletion follow-up" },
    (message) => finishDeletion(depsFor(message.projectId), message),
  );
}

/**
 * The deletions dead-letter queue's handler. What a message there did not finish is still recorded
 * in D1 (unpublished events, deleted videos with R2 leftovers), so the scheduled sweep does it;
 * the message is logged and acknowledged.
 */
export function consumeDeadDeletions(batch: MessageBatch<unknown>): void {
  logDeadLetters(batch, "deletion follow-up gave up; the sweep takes over");
}
