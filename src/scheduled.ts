import { deleteExpiredViews } from "./analytics/retention";
import { deleteExpiredSessions } from "./auth/session-queries";
import { coordinatorOf } from "./encoding/pipeline/coordinator-stub";
import { sweepEncodings } from "./encoding/pipeline/sweeper";
import { deleteExpiredKeys } from "./idempotency/middleware";
import { sweepImports } from "./imports/sweeper";
import { sweepUnpublished } from "./outbox/publish";
import { sweepDeletedProjects } from "./projects/deletions";
import { publisherOf } from "./subscribers";
import { sweepExpiredUploads } from "./uploads/sweeper";
import { tusUploads } from "./uploads/tus/objects";
import { sweepDeletedVideos, sweepExpiredTestVideos } from "./videos/sweeper";
import { deleteExpiredDeliveries } from "./webhooks/retention";
import { sendLostAttempts } from "./webhooks/subscriber";

/**
 * Everything the cron trigger runs, each with what it needs and nothing more. Each task works in
 * bounded batches; what one run leaves, the next run goes on with.
 */
export const SCHEDULED_TASKS: Record<string, (env: Env) => Promise<unknown>> = {
  "deleted videos' R2 clean-up": (env) =>
    sweepDeletedVideos({ db: env.DB, media: env.MEDIA, uploads: tusUploads(env.TUS_UPLOADS) }),
  "expired uploads": (env) => sweepExpiredUploads({ db: env.DB, media: env.MEDIA }),
  "expired test videos": (env) => sweepExpiredTestVideos({ db: env.DB, deletions: env.DELETION_QUEUE }),
  "deleted projects' purge": (env) =>
    sweepDeletedProjects({
      db: env.DB,
      media: env.MEDIA,
      uploads: tusUploads(env.TUS_UPLOADS),
      cancelEncoding: (id) => coordinatorOf(env, id).cancel(),
    }),
  "expired sessions": (env) => deleteExpiredSessions(env.DB),
  "unpublished events": (env) => sweepUnpublished(publisherOf(env)),
  "lost delivery messages": (env) => sendLostAttempts({ db: env.DB, queue: env.WEBHOOK_QUEUE }),
  "delivery retention": (env) => deleteExpiredDeliveries(env.DB),
  "expired idempotency keys": (env) => deleteExpiredKeys(env.DB),
  "silent or lost encodings": (env) => sweepEncodings(env),
  "lost imports": (env) => sweepImports({ db: env.DB, queue: env.IMPORT_QUEUE }),
  "analytics view retention": (env) => deleteExpiredViews(env.DB),
};
