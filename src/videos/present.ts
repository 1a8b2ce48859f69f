import type { Context } from "hono";
import type { AppEnv } from "../http/context";
import { ApiError } from "../http/errors";
import { publicOrigin } from "../http/public-url";
import { parseUlid } from "../lib/ulid";
import { thumbnailOf } from "../thumbnails/urls";
import { toVideo, type Video, type VideoRow } from "./model";
import { findVideo } from "./queries";

/** The video object as the API shows it. */
export function present(c: Context<AppEnv>, row: VideoRow, now: number = Date.now()): Video {
  return toVideo(row, thumbnailOf(publicOrigin(c), row), now);
}

/** The live video the path names in the caller's project; anything else is video_not_found. */
export async function pathVideo(c: Context<AppEnv>, rawId: string): Promise<VideoRow> {
  const id = parseUlid(rawId);
  const row = id ? await findVideo(c.var.db, c.var.projectId, id) : null;
  if (!row) throw new ApiError("video_not_found");
  return row;
}
