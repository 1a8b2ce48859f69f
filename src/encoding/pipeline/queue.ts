import { NOT_STARTED } from "../../audio-tracks/making";
import { finishAudioTrack } from "../../audio-tracks/queries";
import { logError } from "../../lib/log";
import { consumeEach } from "../../lib/queue";
import { sendCaptionMessage } from "../../queues/captions";
import { AudioMessageSchema, CoordinatorMessageSchema, HearMessageSchema } from "../../queues/encodings";
import { coordinatorOf } from "./coordinator-stub";

/**
 * The encodings queue's handler: hands each video to its coordinator (coordinator.ts), which
 * takes it from there; starting twice is harmless; so is hearing a track twice (a generation is
 * heard once). An error retries the message, then sends it to the dead-letter queue, where the
 * sweeper's look at uploaded videos takes over.
 */
export function consumeEncodes(batch: MessageBatch<unknown>, env: Env): Promise<void> {
  return consumeEach(
    batch,
    CoordinatorMessageSchema,
    { malformed: "encode message malformed", failed: "encode: start" },
    async (message) => {
      const coordinator = coordinatorOf(env, message.videoId);
      const video = { projectId: message.projectId, videoId: message.videoId };
      if ("hear" in message) await coordinator.hear(video, message.hear);
      else if ("audio" in message) await coordinator.audio(video, message.audio.language);
      else await coordinator.start(message);
    },
  );
}

/**
 * The dead-letter queue: a video to encode is still `uploaded` in D1, so the sweeper starts it; a
 * track whose speech could not be asked for fails (the captions are told, so it does not stay
 * processing); so does an added audio track that could not be asked for, if that PUT still names it.
 */
export async function consumeDeadEncodes(batch: MessageBatch<unknown>, env: Env): Promise<void> {
  for (const message of batch.messages) {
    const audio = AudioMessageSchema.safeParse(message.body);
    if (audio.success) {
      const { videoId, audio: track } = audio.data;
      try {
        const failed = { status: "errored", code: "encoding_failed", message: NOT_STARTED } as const;
        await finishAudioTrack(env.DB, { videoId, ...track }, failed, Date.now());
        message.ack();
      } catch (error) {
        logError("audio tracks: fail a dead request", error, { messageId: message.id });
        message.retry();
      }
      continue;
    }
    const hear = HearMessageSchema.safeParse(message.body);
    if (!hear.success) {
      logError("encode message gave up; the sweep takes over", JSON.stringify(message.body), { messageId: message.id });
      message.ack();
      continue;
    }
    const { projectId, videoId, hear: track } = hear.data;
    try {
      await sendCaptionMessage(env.CAPTIONS_QUEUE, {
        type: "heard",
        projectId,
        videoId,
        language: track.language,
        generation: track.generation,
        outcome: { kind: "failed", message: "The speech could not be heard: its work could not be started." },
      });
      message.ack();
    } catch (error) {
      logError("speech: tell the captions of a dead request", error, { messageId: message.id });
      message.retry();
    }
  }
}
