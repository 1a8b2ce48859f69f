import { applyD1Migrations } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { beforeEach, vi } from "vitest";
import { type DeletionMessage, finishDeletion } from "../src/videos/deletions";

await applyD1Migrations(env.DB, env.TEST_MIGRATIONS);

// A delete's follow-up goes through the deletions queue, whose live consumer waits in tests (see
// vitest.config.ts). Here a message is consumed as soon as it is sent, as the consumer would, so
// tests see a delete's events and R2 clean-up when its response arrives. Tests of the queue
// itself pass a queue of their own.
beforeEach(() => {
  vi.spyOn(env.DELETION_QUEUE, "send").mockImplementation(async (body) => {
    await finishDeletion({ db: env.DB, media: env.MEDIA, webhooks: env.WEBHOOK_QUEUE }, body as DeletionMessage);
    return { metadata: { metrics: { backlogCount: 0, backlogBytes: 0, oldestMessageTimestamp: new Date() } } };
  });
});
