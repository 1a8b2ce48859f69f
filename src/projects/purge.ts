import type { Db } from "../lib/db";
import { DRAIN_BATCH } from "../lib/drain";
import { logError } from "../lib/log";
import { deleteSome } from "../lib/r2";
import { projectPrefixes } from "../lib/storage-keys";
import { isoTime } from "../lib/time";
import { endUpload, type TusUploads } from "../videos/cleanup";
import { forEachVideo } from "../videos/r2-work";
import {
  clearUploadsStatement,
  deleteProjectRowStatement,
  encodingStoppedStatement,
  encodingVideos,
  openUploads,
  PURGED_TABLE_ORDER,
  type PurgedTable,
  projectState,
  purgeRowsStatement,
} from "./queries";

/**
 * How much one purge run may do: rows per D1 statement, keys per R2 list and delete (R2's own
 * maximum for both), videos whose multipart upload one step aborts, and steps per run (a step is
 * one bounded statement, one R2 list-and-delete, or one batch of aborts; a run takes at least one
 * per stage). A run stays short; the next one goes on where it stopped, since every step removes
 * what it did.
 */
export type PurgeLimits = { rows: number; keys: number; uploads: number; steps: number };
export const PURGE_LIMITS: PurgeLimits = { rows: DRAIN_BATCH, keys: 1000, uploads: 100, steps: 20 };

export type PurgeResult = {
  /** The project row is gone: nothing of the project is left. */
  done: boolean;
  /** Rows, R2 objects and uploads this run removed (aborted uploads count once each). */
  removed: number;
  /** Steps this run took. */
  steps: number;
};

export type PurgeDeps = {
  db: Db;
  media: R2Bucket;
  uploads: TusUploads;
  /** Stops a video's encoding: its jobs end, and it stores nothing more. */
  cancelEncoding: (videoId: string) => Promise<void>;
};

/** One bounded piece of the purge: what it removed, and whether more may be left. */
type Step = () => Promise<{ removed: number; more: boolean }>;

/** Aborts the open multipart uploads of up to `limit` of the project's videos, and forgets them. */
function abortUploads(deps: PurgeDeps, projectId: string, limit: number): Step {
  return async () => {
    const rows = await openUploads(deps.db, projectId, limit);
    const aborted = await forEachVideo(rows, (row) => endUpload(deps, row), "project purge: abort upload");
    if (aborted.length > 0) await clearUploadsStatement(deps.db, aborted).run();
    if (aborted.length < rows.length) throw new Error(`${rows.length - aborted.length} multipart aborts failed`);
    return { removed: aborted.length, more: rows.length >= limit };
  };
}

/**
 * Stops the encodings of up to `limit` of the project's videos (before its objects go, so no job
 * stores anything after), and marks those videos gone with the project.
 */
function stopEncodings(deps: PurgeDeps, projectId: string, limit: number): Step {
  return async () => {
    const rows = await encodingVideos(deps.db, projectId, limit);
    await Promise.all(rows.map((row) => deps.cancelEncoding(row.id)));
    if (rows.length > 0) {
      await encodingStoppedStatement(
        deps.db,
        rows.map((row) => row.id),
        isoTime(Date.now()),
      ).run();
    }
    return { removed: rows.length, more: rows.length >= limit };
  };
}

/** Deletes up to `limit` objects under `prefix`. */
function deleteObjects(media: R2Bucket, prefix: string, limit: number): Step {
  return () => deleteSome(media, prefix, limit);
}

function deleteRows(db: Db, table: PurgedTable, projectId: string, limit: number): Step {
  return async () => {
    const removed = (await purgeRowsStatement(db, table, projectId, limit).run()).meta.changes;
    return { removed, more: removed >= limit };
  };
}

/**
 * One bounded run of a deleted project's purge. In order: stop its videos' encodings, abort the
 * multipart uploads of its videos still open, delete its R2 objects by prefix, delete its rows table by table (children
 * first), and last its project row, only in a run that found nothing else left. Each step is safe
 * to repeat and to run beside another purge of the same project. A live project is never touched;
 * an unknown one (purged already) is done. Throws when R2 or D1 fails, for the caller's retries.
 */
export async function purgeProject(
  deps: PurgeDeps,
  projectId: string,
  limits: PurgeLimits = PURGE_LIMITS,
): Promise<PurgeResult> {
  const state = await projectState(deps.db, projectId);
  if (state === "gone") return { done: true, removed: 0, steps: 0 };
  if (state === "live") {
    logError("project purge: refused", "the project is not deleted", { projectId });
    return { done: true, removed: 0, steps: 0 };
  }
  const stages: Step[] = [
    stopEncodings(deps, projectId, limits.uploads),
    abortUploads(deps, projectId, limits.uploads),
    ...projectPrefixes(projectId).map((prefix) => deleteObjects(deps.media, prefix, limits.keys)),
    ...PURGED_TABLE_ORDER.map((table) => deleteRows(deps.db, table, projectId, limits.rows)),
  ];
  // A run that finds everything empty takes one step per stage and one for the row: never fewer.
  const budget = Math.max(limits.steps, stages.length + 1);
  let removed = 0;
  let steps = 0;
  for (const stage of stages) {
    for (;;) {
      if (steps >= budget) return { done: false, removed, steps };
      const result = await stage();
      steps += 1;
      removed += result.removed;
      if (!result.more) break;
    }
  }
  if (steps >= budget) return { done: false, removed, steps };
  const deleted = (await deleteProjectRowStatement(deps.db, projectId).run()).meta.changes > 0;
  return { done: deleted, removed: removed + (deleted ? 1 : 0), steps: steps + 1 };
}
