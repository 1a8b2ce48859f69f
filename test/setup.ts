import { applyD1Migrations } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { beforeEach, vi } from "vitest";
import { coordinatorOf } from "../src/encoding/pipeline/coordinator-stub";
import { stopImport } from "../src/imports/objects";
import { publishNow } from "../src/subscribers";
import { tusUploads } from "../src/uploads/tus/objects";
import { type DeletionMessage, finishDeletion } from "../src/videos/deletion-queue";
import { sentMessage } from "./support/queues";

await applyD1Migrations(env.DB, env.TEST_MIGRATIONS);

// A delete's follow-up goes through the deletions queue, whose live consumer waits in tests (see
// vitest.config.ts). Here a message is consumed as soon as it is sent, as the consumer would, so
// tests see a delete's events and R2 clean-up when its response arrives. Tests of the queue
// itself pass a queue of their own.
beforeEach(() => {
  vi.spyOn(env.DELETION_QUEUE, "send").mockImplementation(async (body) => {
    await finishDeletion(
      {
        db: env.DB,
        media: env.MEDIA,
        uploads: tusUploads(env.TUS_UPLOADS),
        publish: publishNow(env),
        cancelEncoding: (id) => coordinatorOf(env, id).cancel(),
        stopImport: (id) => stopImport(env, id),
      },
      body as DeletionMessage,
    );
    return sentMessage;
  });
  // A project deletion's purge is run by the tests that look at it (test/projects/deletion.test.ts),
  // through the queue handler: here its message is only kept, never handed to the live consumer.
  vi.spyOn(env.PROJECT_DELETION_QUEUE, "send").mockResolvedValue(sentMessage);
  // An uploaded video's encode message is kept for the tests that run the encodings queue's
  // handler themselves (test/encoding/pipeline/), never handed to the live consumer.
  vi.spyOn(env.ENCODE_QUEUE, "send").mockResolvedValue(sentMessage);
  // A generated caption track's messages (what its speech was heard as) are kept likewise for the
  // tests that run the caption-generations queue's handler themselves (test/captions/generated.test.ts).
  vi.spyOn(env.CAPTIONS_QUEUE, "send").mockResolvedValue(sentMessage);
});
