import { logError } from "../lib/log";
import { consumeEach } from "../lib/queue";
import { CaptionMessageSchema } from "../queues/captions";
import { findVideo } from "../videos/queries";
import { askForCreationTracks, makeTrack, type Publish } from "./generation";

/**
 * The caption-generations queue's consumer (its home: src/queues/captions.ts): a video that became
 * playable has the tracks its creation asked for asked for; a track's speech that was heard (or
 * could not be) makes the track. Both are safe to do twice: a track asked for again is a new
 * generation, and a generation's track is made once (a second time changes nothing).
 */
export function consumeCaptionMessages(batch: MessageBatch<unknown>, env: Env, publish: Publish): Promise<void> {
  return consumeEach(
    batch,
    CaptionMessageSchema,
    { malformed: "captions message malformed", failed: "captions: make a track" },
    async (message) => {
      const db = env.DB;
      if (message.type === "playable") {
        const video = await findVideo(db, { projectId: message.projectId, mode: "both" }, message.videoId);
        if (video) await askForCreationTracks(env, db, video, message.languages);
        return;
      }
      await makeTrack(env, db, message, message.outcome, publish);
    },
  );
}

/**
 * The dead-letter queue: a track whose message used up its retries errors, so none stays
 * processing; a creation's request that could not be made is logged.
 */
export async function consumeDeadCaptionMessages(
  batch: MessageBatch<unknown>,
  env: Env,
  publish: Publish,
): Promise<void> {
  for (const message of batch.messages) {
    const parsed = CaptionMessageSchema.safeParse(message.body);
    try {
      if (parsed.success && parsed.data.type === "heard") {
        const failed = { kind: "failed" as const, message: "The captions could not be made of what was heard." };
        await makeTrack(env, env.DB, parsed.data, failed, publish);
      } else logError("captions message gave up", JSON.stringify(message.body), { messageId: message.id });
      message.ack();
    } catch (error) {
      logError("captions: fail a dead track", error, { messageId: message.id });
      message.retry();
    }
  }
}
