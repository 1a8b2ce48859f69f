import { askToMake } from "../audio-tracks/making";
import { logError } from "../lib/log";
import { abortMultipartUpload } from "../lib/r2";
import { queueEncoding } from "../queues/encodings";
import type { TrackRef } from "../queues/imports";
import { COMPLETION_LEASE_MS, type VideoRow } from "../videos/model";
import { type FailDeps, failImport } from "./fail";
import {
  failTrackImport,
  type Held,
  type ImportRow,
  type ImportTable,
  importingTrack,
  importingVideo,
  markImported,
  markTrackFetched,
  TRACK_IMPORTS,
  VIDEO_IMPORTS,
} from "./queries";
import { failureMessage } from "./words";

/**
 * What an import fetches into (docs/imports.md, "What an import fills"): a video's own source, or
 * an added audio track's file (docs/audio-tracks.md). A run (run.ts) fetches either alike, keeping
 * its state where `on` says; they differ in how they end.
 */
export type ImportTarget = {
  on: ImportTable;
  /** The import's id in its table: the video's, or the track's generation. */
  id: string;
  /**
   * The file is whole in R2: the video becomes `uploaded` and is encoded; the track is made by its
   * video's coordinator. False when the run's lease was lost.
   */
  finish(hold: Held, row: ImportRow, completedParts: string, now: number): Promise<boolean>;
  /**
   * Fails the import for good (its multipart upload aborted), under the run's `lease`, or when no
   * run holds it (`null`). False when it was not failed (the lease lost, or it is over).
   */
  fail(row: ImportRow, lease: string | null, reason: string): Promise<boolean>;
  /** The import as it is now, while it is still fetched; null once it is over or gone. */
  pending(): Promise<ImportRow | null>;
};

export type TargetDeps = FailDeps & { encodeQueue: Queue };

/** The import of a video's own source: `importing`, then `uploaded`, or `errored` with `import_failed`. */
export function videoTarget(deps: TargetDeps, videoId: string): ImportTarget {
  return {
    on: VIDEO_IMPORTS,
    id: videoId,
    async finish(hold, row, completedParts, now) {
      const until = now + COMPLETION_LEASE_MS;
      const uploaded = await markImported(deps.db, hold, row.project_id, completedParts, now, until);
      if (!uploaded) return false;
      await queueEncoding(deps.encodeQueue, uploaded);
      return true;
    },
    fail: async (row, lease, reason) => (await failImport(deps, row as VideoRow, lease, reason)) !== null,
    pending: () => importingVideo(deps.db, videoId),
  };
}

/**
 * The import of an added audio track's file (`track`, of video `videoId`): the track stays
 * `processing` while it is fetched, is then asked of the video's coordinator, or errors with
 * `import_failed`. Its video's deletion, or the track put again or deleted, ends its fetch at the
 * run's next step (the lease is lost).
 */
export function trackTarget(deps: TargetDeps, videoId: string, track: TrackRef): ImportTarget {
  return {
    on: TRACK_IMPORTS,
    id: track.generation,
    async finish(hold, row, _completedParts, now) {
      const fetched = await markTrackFetched(deps.db, hold, row.project_id, now);
      if (!fetched) return false;
      // A message that cannot be sent errors the track (askToMake), so it never waits for ever.
      await askToMake(deps.encodeQueue, deps.db, fetched).catch(() => {});
      return true;
    },
    async fail(row, lease, reason) {
      const failed = await failTrackImport(deps.db, track.generation, lease, failureMessage(reason), deps.clock());
      if (failed && row.upload_r2_id) {
        await abortMultipartUpload(deps.media, row.source_key, row.upload_r2_id).catch((error) =>
          logError("import: abort a track's upload", error, { videoId, generation: track.generation }),
        );
      }
      return failed;
    },
    pending: () => importingTrack(deps.db, track.generation),
  };
}

/** The target of an import's message (or of a run's): the video's own source, or its track's file. */
export function targetOf(deps: TargetDeps, message: { videoId: string; track?: TrackRef | undefined }): ImportTarget {
  return message.track ? trackTarget(deps, message.videoId, message.track) : videoTarget(deps, message.videoId);
}

/**
 * Gives up on an import no run can finish (its message or its runs kept failing on errors such as R2
 * or D1 down): fails it, unless a run holds it now, so nothing stays being fetched for ever.
 */
export async function giveUp(target: ImportTarget): Promise<void> {
  const row = await target.pending();
  if (row) await target.fail(row, null, "it could not be fetched after many tries");
}
