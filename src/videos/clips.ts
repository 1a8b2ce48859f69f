import { ApiError } from "../http/errors";
import type { Db } from "../lib/db";
import { modeOf, type Tenant } from "../lib/tenant";
import { parseUlid, ulid } from "../lib/ulid";
import { queueEncoding } from "./encode-queue";
import { type ClipSpan, newClipRow, type VideoChoices, type VideoRow, WITH_SOURCE } from "./model";
import { findVideo, insertVideoStatement } from "./queries";

// Frame-accurate clips as videos (contract §19): a new video encoded from a span of another
// video's source. It reads that source where it is (nothing is copied): the clean-up keeps a source
// while a clip of it is not cleaned up (cleanup.ts), so the clip outlives the video it was cut from.

/** What the caller asks: the video to cut from, and the span there in seconds. */
export type ClipRequest = { videoId: string; start: number; end: number };

/**
 * The span in the source a clip of `video` is made of: its own span there, moved by where `video`
 * itself starts in that source when it is a clip (so a clip of a clip reads the first video's source).
 * Throws the contract's errors: `video_not_ready` for a video not processing or ready, `invalid_body`
 * for a span past its end (when its duration is known; a span past the source's end found by the
 * probe errors the clip).
 */
export function clipSpan(video: VideoRow, request: ClipRequest): ClipSpan {
  if (!WITH_SOURCE.includes(video.status)) throw new ApiError("video_not_ready");
  if (video.duration !== null && request.end > video.duration) {
    throw new ApiError("invalid_body", {
      details: [{ path: "clipOf.end", message: `must be at most the video's duration, ${video.duration} s` }],
    });
  }
  const offset = video.clip_start ?? 0;
  return { of: video.clip_of ?? video.id, start: offset + request.start, end: offset + request.end };
}

/**
 * Creates the clip of `request` as a new video of the same project and mode as the video it is cut
 * from, `uploaded` at once, and queues its encoding. `404 video_not_found` for a video the tenant
 * does not see (or one deleted meanwhile).
 */
export async function createClip(
  deps: { db: Db; encodeQueue: Queue },
  tenant: Tenant,
  request: ClipRequest,
  choices: VideoChoices,
  now: number,
): Promise<VideoRow> {
  const id = parseUlid(request.videoId);
  const video = id ? await findVideo(deps.db, tenant, id) : null;
  if (!video) throw new ApiError("video_not_found");
  const row = newClipRow({
    ...choices,
    id: ulid(now),
    projectId: video.project_id,
    mode: modeOf(video.livemode),
    sourceKey: video.source_key,
    now,
    clip: clipSpan(video, request),
  });
  // Only while the video is live: once it is deleted its clean-up may be deciding its source's fate.
  const inserted = await insertVideoStatement(deps.db, row, video.id).run();
  // `changes` counts the title index's trigger too: none means the video was not live.
  if (inserted.meta.changes === 0) throw new ApiError("video_not_found");
  await queueEncoding(deps.encodeQueue, row);
  return row;
}
