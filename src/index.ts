import { BEACON_DEAD_LETTERS, BEACON_QUEUE, consumeBeacons, consumeDeadBeacons } from "./analytics/queue";
import { createApp } from "./app";
import { consumeCaptionMessages, consumeDeadCaptionMessages } from "./captions/generation-queue";
import { coordinatorOf } from "./encoding/pipeline/coordinator-stub";
import { consumeDeadEncodes, consumeEncodes } from "./encoding/pipeline/queue";
import { consumeDeadImports, consumeImports } from "./imports/consumer";
import { stopImport } from "./imports/objects";
import { logError } from "./lib/log";
import { consumeProjectDeletions, PROJECT_DELETION_QUEUE } from "./projects/deletions";
import { CAPTIONS_DEAD_LETTERS, CAPTIONS_QUEUE } from "./queues/captions";
import { ENCODE_DEAD_LETTERS, ENCODE_QUEUE } from "./queues/encodings";
import { IMPORT_DEAD_LETTERS, IMPORT_QUEUE } from "./queues/imports";
import { SCHEDULED_TASKS } from "./scheduled";
import { publishNow } from "./subscribers";
import { tusUploads } from "./uploads/tus/objects";
import { consumeDeadDeletions, consumeDeletions, DELETION_DEAD_LETTERS, DELETION_QUEUE } from "./videos/deletion-queue";
import {
  consumeDeadLetters,
  consumeDeliveries,
  DELIVERY_DEAD_LETTERS,
  DELIVERY_QUEUE,
} from "./webhooks/delivery-queue";
import { lanesOf } from "./webhooks/lane";

export { EncoderContainer } from "./encoding/pipeline/container";
export { VideoEncoding } from "./encoding/pipeline/coordinator";
export { EncoderPool } from "./encoding/pipeline/pool";
export { VideoImport } from "./imports/object";
export { RateLimiter } from "./rate-limit/limiter";
export { TusUpload } from "./uploads/tus/object";
export { DeliveryLane } from "./webhooks/lane";

const app = createApp();
const noop = () => {};

/** Each queue's consumer, by the queue's name (wrangler.toml). */
const CONSUMERS: Record<string, (batch: MessageBatch<unknown>, env: Env) => Promise<void> | void> = {
  [DELIVERY_QUEUE]: (batch, env) => consumeDeliveries(batch, lanesOf(env.DELIVERY_LANES)),
  [DELIVERY_DEAD_LETTERS]: (batch, env) => consumeDeadLetters(batch, env.DB),
  [DELETION_QUEUE]: (batch, env) =>
    consumeDeletions(batch, () => {
      const db = env.DB;
      return {
        db,
        media: env.MEDIA,
        uploads: tusUploads(env.TUS_UPLOADS),
        publish: publishNow(env, db),
        cancelEncoding: (id) => coordinatorOf(env, id).cancel(),
        stopImport: (id) => stopImport(env, id),
      };
    }),
  [DELETION_DEAD_LETTERS]: (batch) => consumeDeadDeletions(batch),
  [ENCODE_QUEUE]: (batch, env) => consumeEncodes(batch, env),
  [ENCODE_DEAD_LETTERS]: (batch, env) => consumeDeadEncodes(batch, env),
  [IMPORT_QUEUE]: (batch, env) => consumeImports(batch, env),
  [IMPORT_DEAD_LETTERS]: (batch, env) => consumeDeadImports(batch, env),
  [BEACON_QUEUE]: (batch, env) => consumeBeacons(batch, env.DB),
  [BEACON_DEAD_LETTERS]: (batch) => consumeDeadBeacons(batch),
  [CAPTIONS_QUEUE]: (batch, env) => consumeCaptionMessages(batch, env, publishNow(env)),
  [CAPTIONS_DEAD_LETTERS]: (batch, env) => consumeDeadCaptionMessages(batch, env, publishNow(env)),
  [PROJECT_DELETION_QUEUE]: (batch, env) =>
    consumeProjectDeletions(batch, {
      db: env.DB,
      media: env.MEDIA,
      uploads: tusUploads(env.TUS_UPLOADS),
      queue: env.PROJECT_DELETION_QUEUE,
      cancelEncoding: (id) => coordinatorOf(env, id).cancel(),
    }),
};

export default {
  fetch: app.fetch,
  async queue(batch, env, _ctx) {
    const consume = CONSUMERS[batch.queue];
    if (!consume) throw new Error(`no consumer for queue ${batch.queue}`);
    await consume(batch, env);
  },
  scheduled(_controller, env, ctx) {
    for (const [what, task] of Object.entries(SCHEDULED_TASKS)) {
      ctx.waitUntil(task(env).then(noop, (error) => logError(`scheduled: ${what}`, error)));
    }
  },
} satisfies ExportedHandler<Env>;
