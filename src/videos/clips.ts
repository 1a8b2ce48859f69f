import { ApiError } from "../http/errors";
import type { Db } from "../lib/db";
import { modeOf, type Tenant } from "../lib/tenant";
import { parseUlid, ulid } from "../lib/ulid";
import { queueEncoding } from "../queues/encodings";
import { TEST_VIDEO_SECONDS, type VideoRow, type Visibility, WITH_SOURCE } from "./model";
import { type ClipSpan, newClipRow, type VideoChoices } from "./new-rows";
import { findVideo, insertVideoStatement } from "./queries";

// Frame-accurate clips as videos (docs/import-clips-search.md#clips-as-videos-clipof): a new video
// encoded from a span of another video's source. It reads that source where it is (nothing is
// copied): the clean-up keeps a source while a clip of it is not cleaned up (cleanup.ts), so the
// clip outlives the video it was cut from.

/** What the caller asks: the video to cut from, and the span there in seconds. */
export type ClipRequest = { videoId: string; start: number; end: number };

/**
 * Seconds of a span, to the microsecond (far under a frame), so arithmetic in binary fractions
 * leaves no trace: `1.4 - 0.1` is 1.2999999999999998, `2.2 + 0.12` is 2.3200000000000003.
 */
function toMicroseconds(seconds: number): number {
  return Math.round(seconds * 1_000_000) / 1_000_000;
}

/**
 * How long `video` lasts, as far as it can be known now: its duration once probed; before that, a
 * clip lasts at most the span it was cut to, and a test video its first seconds (it is encoded from
 * no more). Null when nothing bounds it yet (a source being probed).
 */
function knownLength(video: VideoRow): number | null {
  if (video.duration !== null) return video.duration;
  const bounds: number[] = [];
  if (video.clip_start !== null && video.clip_end !== null)
    bounds.push(toMicroseconds(video.clip_end - video.clip_start));
  if (video.livemode === 0) bounds.push(TEST_VIDEO_SECONDS);
  return bounds.length === 0 ? null : Math.min(...bounds);
}

/**
 * The span in the source a clip of `video` is made of: its own span there, moved by where `video`
 * itself starts in that source when it is a clip (so a clip of a clip reads the first video's
 * source), and never past where `video` ends there: a clip's span lies within its video's, so a
 * chain of clips only narrows (docs/import-clips-search.md). Throws the API's errors: `video_not_ready` for a video not
 * processing or ready, `invalid_body` for a span past its known length (`knownLength`: a clip's is
 * known before its probe; a source's span found past its end by the probe errors the clip).
 */
export function clipSpan(video: VideoRow, request: ClipRequest): ClipSpan {
  if (!WITH_SOURCE.includes(video.status)) throw new ApiError("video_not_ready");
  const length = knownLength(video);
  if (length !== null && request.end > length) {
    throw new ApiError("invalid_body", {
      details: [{ path: "clipOf.end", message: `must be at most the video's length, ${length} s` }],
    });
  }
  const offset = video.clip_start ?? 0;
  // A probed clip may last a frame more than its span (whole frames): its end there still bounds.
  const end = Math.min(toMicroseconds(offset + request.end), video.clip_end ?? Number.POSITIVE_INFINITY);
  return { of: video.clip_of ?? video.id, start: toMicroseconds(offset + request.start), end };
}

/**
 * What a clip is given beside its span: the caller's choices for the new video; without a
 * visibility, the video's it is cut from (a clip of a private video is private).
 */
export type ClipChoices = Omit<VideoChoices, "visibility"> & { visibility?: Visibility | undefined };

/**
 * Creates the clip of `request` as a new video of the same project and mode as the video it is cut
 * from, `uploaded` at once, and queues its encoding. `404 video_not_found` for a video the tenant
 * does not see (or one deleted meanwhile).
 */
export async function createClip(
  deps: { db: Db; encodeQueue: Queue },
  tenant: Tenant,
  request: ClipRequest,
  choices: ClipChoices,
  now: number,
): Promise<VideoRow> {
  const id = parseUlid(request.videoId);
  const video = id ? await findVideo(deps.db, tenant, id) : null;
  if (!video) throw new ApiError("video_not_found");
  const row = newClipRow({
    ...choices,
    visibility: choices.visibility ?? video.visibility,
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
