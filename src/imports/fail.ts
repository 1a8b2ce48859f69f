import type { Db } from "../lib/db";
import { logError } from "../lib/log";
import { abortMultipartUpload } from "../lib/r2";
import { isoTime } from "../lib/time";
import { ulid } from "../lib/ulid";
import { encodingEvent } from "../videos/events";
import type { VideoRow } from "../videos/model";
import { videoAt } from "../videos/present";
import { failImportRow } from "./queries";
import { failureMessage } from "./words";

/** What failing an import touches: D1, R2, the outbox's publishing, and the origin of the event's URLs. */
export type FailDeps = {
  db: Db;
  media: R2Bucket;
  publish: (eventIds: string[]) => Promise<void>;
  /** The origin of the URLs in the event's video object (PUBLIC_BASE_URL, else the encoder's callback origin). */
  origin: string | null;
  clock: () => number;
};

/**
 * Fails an import for good (docs/imports.md, "Failing"): `errored` with `import_failed` and its reason, the
 * `video.errored` event recorded with the change and published at once, and the R2 multipart
 * upload aborted (a failed abort is left to the video's deletion clean-up, which aborts
 * `upload_r2_id`). Null when the video was not failed (lease lost, deleted, finished meanwhile).
 */
export async function failImport(
  deps: FailDeps,
  row: VideoRow,
  lease: string | null,
  reason: string,
): Promise<VideoRow | null> {
  if (!deps.origin) throw new Error("PUBLIC_BASE_URL or ENCODER_CALLBACK_URL must be set for the URLs in events");
  const now = deps.clock();
  const at = isoTime(now);
  const message = failureMessage(reason);
  const after: VideoRow = {
    ...row,
    status: "errored",
    error_code: "import_failed",
    error_message: message,
    import_lease_until: null,
    updated_at: at,
  };
  const event = { id: ulid(now), event: encodingEvent(videoAt(deps.origin, after, now)) };
  const failed = await failImportRow(deps.db, row, lease, message, at, event);
  if (!failed) return null;
  if (row.upload_r2_id) {
    await abortMultipartUpload(deps.media, row.source_key, row.upload_r2_id).catch((error) =>
      logError("import: abort (the deletion clean-up aborts it)", error, { videoId: row.id }),
    );
  }
  await deps.publish([event.id]).catch((error) => logError("import: publish", error, { videoId: row.id }));
  return failed;
}
