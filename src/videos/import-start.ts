import { ApiError } from "../http/errors";
import type { Db } from "../lib/db";
import { logError } from "../lib/log";
import { type TargetRules, targetProblem } from "../lib/safe-targets";
import { sourceKey } from "../lib/storage-keys";
import { creationMode, type Tenant } from "../lib/tenant";
import { ulid } from "../lib/ulid";
import { sendImport } from "../queues/imports";
import type { VideoRow } from "./model";
import { newImportRow, type VideoChoices } from "./new-rows";
import { insertVideoStatement } from "./queries";

/**
 * The start of an import from a URL (docs/imports.md): the video's row, `importing`, and the message
 * that hands it to the imports queue's consumer (src/imports/, which fetches it). Here, beside the
 * other ways a video is created, so that `POST /v1/videos` needs nothing of src/imports/, which
 * itself builds on videos/ (a folder may not import one that imports it back).
 */

/**
 * The URL to import, normalized, if it is a safe target (as a webhook's,
 * docs/webhooks.md#safe-targets); else invalid_body on `sourceUrl`.
 */
export function importUrl(text: string, rules: TargetRules): string {
  const problem = targetProblem(text, rules);
  if (problem) throw new ApiError("invalid_body", { details: [{ path: "sourceUrl", message: problem }] });
  return new URL(text).toString();
}

export type ImportedVideo = VideoChoices & { url: string };

/**
 * Records a new video `importing` from `video.url` (already checked by `importUrl`) and queues its
 * fetch. It has no upload session: the consumer opens the R2 multipart upload on its first run. A
 * send that fails is logged, not thrown: the video is recorded, and the sweeper sends its message.
 */
export async function createImportedVideo(
  db: Db,
  queue: Queue,
  tenant: Tenant,
  video: ImportedVideo,
  now: number,
): Promise<VideoRow> {
  const id = ulid(now);
  const row = newImportRow({
    ...video,
    id,
    projectId: tenant.projectId,
    mode: creationMode(tenant),
    sourceKey: sourceKey(tenant.projectId, id),
    now,
  });
  await insertVideoStatement(db, row).run();
  try {
    await sendImport(queue, { projectId: row.project_id, videoId: row.id });
  } catch (error) {
    logError("import: queue send (the sweeper sends it)", error, { videoId: row.id });
  }
  return row;
}
