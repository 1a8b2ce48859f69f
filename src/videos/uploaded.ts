import type { Db } from "../lib/db";
import type { Tenant } from "../lib/tenant";
import { queueEncoding } from "../pipeline/queue";
import type { VideoRow } from "./model";
import { finishCompletion } from "./queries";

/** What marking a video uploaded touches: D1, and the encodings queue the video goes on to. */
export type UploadedDeps = { db: Db; encodeQueue: Queue };

/** A completion that holds the tenant's video's lease, with the parts R2 assembled the source from. */
export type CompletedUpload = { tenant: Tenant; videoId: string; lease: string; completedParts: string };

/**
 * The one place a video becomes `uploaded`: its source is whole in R2 and the completion that holds
 * its lease records it. Both ways of uploading end here, the part API's completion
 * (`upload-routes.ts`) and a tus upload's last byte (`src/uploads/upload-object.ts`), so whatever must
 * follow every upload (the encoding pipeline, contract section 12) is started here, once. Null when
 * the lease was lost meanwhile (the video is as another request left it).
 */
export async function markUploaded(deps: UploadedDeps, upload: CompletedUpload, now: number): Promise<VideoRow | null> {
  const uploaded = await finishCompletion(
    deps.db,
    upload.tenant,
    upload.videoId,
    upload.lease,
    upload.completedParts,
    now,
  );
  if (uploaded) await queueEncoding(deps.encodeQueue, uploaded);
  return uploaded;
}
