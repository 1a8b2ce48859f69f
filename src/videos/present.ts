import type { Context } from "hono";
import type { TenantEnv } from "../auth/context";
import { found } from "../http/found";
import { publicOrigin } from "../http/public-url";
import type { VideoRow } from "./model";
import { findVideo } from "./queries";
import { filesOf, playbackUrls, thumbnailOf } from "./urls";
import { toVideo, type Video } from "./video-object";

/**
 * The video object with its public URLs under `origin` (docs/images.md,
 * docs/encoding.md#playback-tokens-and-the-embed-page), wherever it is built.
 */
export function videoAt(origin: string, row: VideoRow, now: number = Date.now()): Video {
  return toVideo(
    row,
    { thumbnail: thumbnailOf(origin, row), playback: playbackUrls(origin, row.id, filesOf(row)) },
    now,
  );
}

/** The video object as the API shows it. */
export function present<E extends TenantEnv>(c: Context<E>, row: VideoRow, now: number = Date.now()): Video {
  return videoAt(publicOrigin(c), row, now);
}

/**
 * The live video the path names in the caller's project and mode; anything else (another mode's
 * video included) is video_not_found.
 */
export async function pathVideo<E extends TenantEnv>(c: Context<E>, rawId: string): Promise<VideoRow> {
  return found("video_not_found", rawId, (id) => findVideo(c.var.db, c.var.tenant, id));
}
