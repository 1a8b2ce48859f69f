import type { Db } from "../lib/db";
import { logError } from "../lib/log";
import { type ImportMessage, sendImport } from "../queues/imports";
import { LOST_AFTER_MS } from "./limits";
import { lostImports, lostTrackImports } from "./queries";

const BATCH = 50;

/**
 * The imports' part of the scheduled sweep: sends again the message of every import no run is
 * working on (its message lost, or its run died and its lease ran out), a video's source's or an
 * added audio track's file's. A duplicate is harmless: a run needs the lease.
 */
export async function sweepImports(deps: { db: Db; queue: Queue }, now: number = Date.now()): Promise<number> {
  const videos = await lostImports(deps.db, now - LOST_AFTER_MS, BATCH);
  const tracks = await lostTrackImports(deps.db, now - LOST_AFTER_MS, BATCH);
  const messages: ImportMessage[] = [
    ...videos.map((row) => ({ projectId: row.project_id, videoId: row.id })),
    ...tracks.map((row) => ({
      projectId: row.project_id,
      videoId: row.video_id,
      track: { language: row.language, generation: row.generation },
    })),
  ];
  const sent = await Promise.allSettled(messages.map((message) => sendImport(deps.queue, message)));
  for (const settled of sent) if (settled.status === "rejected") logError("import sweep", settled.reason);
  return sent.filter((settled) => settled.status === "fulfilled").length;
}
