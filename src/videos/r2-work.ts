import { logError } from "../lib/log";
import type { VideoRow } from "./model";

/**
 * Runs an R2 task for every video at once and returns the videos whose task succeeded; each
 * failure is logged (as `what`) and left for a later try.
 */
export async function forEachVideo(
  rows: VideoRow[],
  task: (row: VideoRow) => Promise<void>,
  what: string,
): Promise<VideoRow[]> {
  const settled = await Promise.allSettled(rows.map(task));
  return rows.filter((row, i) => {
    const result = settled[i];
    if (result?.status === "fulfilled") return true;
    logError(what, result?.reason, { videoId: row.id });
    return false;
  });
}
