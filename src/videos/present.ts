import type { Context } from "hono";
import type { ProjectEnv } from "../auth/context";
import { found } from "../http/found";
import { publicOrigin } from "../http/public-url";
import { thumbnailOf } from "../thumbnails/urls";
import { toVideo, type Video, type VideoRow } from "./model";
import { findVideo } from "./queries";

/** The video object as the API shows it. */
export function present<E extends ProjectEnv>(c: Context<E>, row: VideoRow, now: number = Date.now()): Video {
  return toVideo(row, thumbnailOf(publicOrigin(c), row), now);
}

/** The live video the path names in the caller's project; anything else is video_not_found. */
export async function pathVideo<E extends ProjectEnv>(c: Context<E>, rawId: string): Promise<VideoRow> {
  return found("video_not_found", rawId, (id) => findVideo(c.var.db, c.var.projectId, id));
}
