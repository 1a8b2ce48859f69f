import type { Db } from "../lib/db";
import { logError } from "../lib/log";
import { sendImport } from "../videos/import-start";
import { LOST_AFTER_MS } from "./limits";
import { lostImports } from "./queries";

const BATCH = 50;

/**
 * The imports' part of the scheduled sweep: sends again the message of every import no run is
 * working on (its message lost, or its run died and its lease ran out). A duplicate is harmless:
 * a run needs the lease.
 */
export async function sweepImports(deps: { db: Db; queue: Queue }, now: number = Date.now()): Promise<number> {
  const lost = await lostImports(deps.db, now - LOST_AFTER_MS, BATCH);
  const sent = await Promise.allSettled(
    lost.map((row) => sendImport(deps.queue, { projectId: row.project_id, videoId: row.id })),
  );
  for (const settled of sent) if (settled.status === "rejected") logError("import sweep", settled.reason);
  return sent.filter((settled) => settled.status === "fulfilled").length;
}
