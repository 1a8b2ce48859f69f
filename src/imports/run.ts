import type { TargetRules } from "../lib/safe-targets";
import type { Timer } from "../lib/time";
import type { TrackRef } from "../queues/imports";
import { canonicalParts } from "../uploads/parts";
import { cutParts, type PartVerdict } from "./cut";
import type { ImportLimits } from "./limits";
import { openSource } from "./origin";
import { PaceWindow } from "./pace";
import {
  countFailure,
  type Held,
  type ImportPart,
  type ImportRow,
  recordMultipart,
  recordPart,
  releaseLease,
  renewLease,
  restartFile,
  storedParts,
  takeLease,
} from "./queries";
import type { ResumeStore } from "./resume";
import { type ImportTarget, type TargetDeps, targetOf } from "./targets";
import { behindReason, tooLarge } from "./words";

/**
 * One run of an import (docs/imports.md): the import's Durable Object calls it for its video (or
 * for an added audio track's file: targets.ts). It takes the import's lease, asks the origin for
 * what is not stored yet, cuts the body into R2 parts of one size, recording each, and stops when
 * its slice is over (the next run goes on), on a transient failure (a later run tries again), when
 * it fails for good, when it is told to stop, or when the file is whole: then the video becomes
 * `uploaded` by the rule every upload ends with, and its encoding is queued (a track is asked of
 * its video's coordinator). Every wait of a run has an end: the origin's pace, the slice and the
 * lease are checked as bytes arrive, and while none do.
 */

export type ImportDeps = TargetDeps & {
  /** The origin is asked through this (the tests' fake origin). */
  fetch: typeof fetch;
  rules: TargetRules;
  limits: ImportLimits;
  /** What the run's waits wake on (tests pass a virtual clock's, with its `clock`). */
  timer: Timer;
  /** What this run leaves the next one. */
  resume: ResumeStore;
  /** Aborts when the run must stop (its video was deleted): the origin's connection is closed at once. */
  signal?: AbortSignal | undefined;
};

export type RunOutcome =
  /** No run for this video now: another holds it, it is deleted, finished or lost meanwhile, or the run was stopped. */
  | { kind: "skipped" }
  /** The source is whole and the video `uploaded`. */
  | { kind: "uploaded" }
  /** Failed for good (`errored`, `import_failed`). */
  | { kind: "failed"; reason: string }
  /** The slice is over: the next run goes on from here. */
  | { kind: "continue" }
  /** A transient failure: try again after this long. */
  | { kind: "retry"; delaySeconds: number };

type Run = { deps: ImportDeps; target: ImportTarget; row: ImportRow; held: Held; startedAt: number };

const NO_BYTES = new Uint8Array(0);

/** One run of the import of video `videoId`'s source, or of its added audio track `track`'s file. */
export async function runImport(deps: ImportDeps, videoId: string, track?: TrackRef): Promise<RunOutcome> {
  const target = targetOf(deps, { videoId, track });
  const startedAt = deps.clock();
  const row = await takeLease(deps.db, target.on, target.id, startedAt, startedAt + deps.limits.leaseMs);
  if (!row || row.import_url === null) return { kind: "skipped" };
  const held = { id: target.id, lease: row.import_lease_until as string };
  const run: Run = { deps, target, row, held, startedAt };
  try {
    return await runHeld(run, row.import_url);
  } catch (error) {
    // R2 or D1 failed: the next run need not wait for the lease to run out.
    await releaseLease(deps.db, target.on, run.held, deps.clock()).catch(() => {});
    throw error;
  }
}

async function runHeld(run: Run, url: string): Promise<RunOutcome> {
  const { deps, row, target } = run;
  let uploadId = row.upload_r2_id;
  if (uploadId === null) {
    const multipart = await deps.media.createMultipartUpload(row.source_key);
    if (!(await recordMultipart(deps.db, target.on, run.held, multipart.uploadId))) {
      await multipart.abort().catch(() => {});
      return { kind: "skipped" };
    }
    uploadId = multipart.uploadId;
    run.row = { ...row, upload_r2_id: uploadId };
  } else if ((await deps.media.head(row.source_key)) !== null) {
    // An earlier run completed the multipart upload, then stopped before recording it.
    return finish(run, null, await storedParts(deps.db, row.project_id, target.id));
  }
  return fetchRest(run, deps.media.resumeMultipartUpload(row.source_key, uploadId), url);
}

async function fetchRest(run: Run, upload: R2MultipartUpload, url: string): Promise<RunOutcome> {
  const { deps, row, target } = run;
  const { limits } = deps;
  let parts = await storedParts(deps.db, row.project_id, target.id);
  let stored = parts.reduce((sum, part) => sum + part.size, 0);
  const kept = deps.resume.load();
  // The part a previous run had begun goes on only from where the stored parts end.
  let head = kept.head?.start === stored ? kept.head.bytes : NO_BYTES;
  if (kept.head) deps.resume.save({ head: null, unresumable: kept.unresumable });
  const ask = { start: stored + head.byteLength, validator: row.import_validator };
  const askedAt = deps.clock();
  const opened = await openSource(
    {
      fetch: deps.fetch,
      rules: deps.rules,
      maxRedirects: limits.maxRedirects,
      pace: limits.pace,
      maxBytes: limits.maxBytes,
      timer: deps.timer,
      signal: deps.signal,
    },
    url,
    ask,
  );
  if (opened.kind === "failed") return fail(run, opened.reason);
  if (opened.kind === "transient") return transient(run, opened.reason);
  if (opened.kind === "stopped") return { kind: "skipped" };
  if (opened.kind === "whole") {
    // Every byte has arrived: the part a previous run had begun is the last.
    if (head.byteLength > 0) {
      const last = await storePart(run, upload, parts.length + 1, head);
      if (!last) return { kind: "skipped" };
      parts.push(last);
    }
    return finish(run, upload, parts);
  }
  let unresumable = kept.unresumable;
  if (opened.start === 0) {
    // The first answer, or one that ignored Range (or whose file changed, If-Range): from byte 0.
    if (!(await restartFile(deps.db, target.on, run.held, row.project_id, opened.validator))) {
      await opened.body.cancel().catch(() => {});
      return { kind: "skipped" };
    }
    if (ask.start > 0 && !unresumable) {
      unresumable = true;
      deps.resume.save({ head: null, unresumable });
    }
    parts = [];
    stored = 0;
    head = NO_BYTES;
  }
  let partsThisRun = 0;
  const cut = await cutParts(
    opened.body,
    { partBytes: limits.partBytes, maxBytes: limits.maxBytes - stored - head.byteLength },
    {
      now: deps.clock,
      timer: deps.timer,
      pace: new PaceWindow(limits.pace, askedAt),
      until: run.startedAt + limits.sliceMs,
      signal: deps.signal,
      head,
      // While no part is stored (a slow origin), the lease is renewed once two thirds of it have gone.
      upkeep: { due: () => Date.parse(run.held.lease) - limits.leaseMs / 3, run: () => keepLease(run) },
      onPart: async (bytes): Promise<PartVerdict> => {
        const part = await storePart(run, upload, parts.length + 1, bytes);
        if (!part) return "lost";
        parts.push(part);
        stored += part.size;
        partsThisRun++;
        return partsThisRun < limits.partsPerRun ? "go" : "pause";
      },
    },
  );
  switch (cut.kind) {
    case "behind":
      return fail(run, behindReason(cut.behind, limits.pace));
    case "too_large":
      return fail(run, tooLarge(limits.maxBytes));
    case "broken":
      return transient(run, "the connection to the origin broke");
    case "lost":
    case "stopped":
      return { kind: "skipped" };
    case "paused":
      return pause(run, stored, cut.partial, unresumable);
  }
  const size = stored + cut.tail.byteLength;
  if (opened.total !== null && size !== opened.total) {
    return transient(run, `the connection closed after ${size} of ${opened.total} bytes`);
  }
  if (size === 0) return fail(run, "the file is empty");
  if (cut.tail.byteLength > 0) {
    const last = await storePart(run, upload, parts.length + 1, cut.tail);
    if (!last) return { kind: "skipped" };
    parts.push(last);
  }
  return finish(run, upload, parts);
}

/**
 * The slice is over (or the run's part limit reached): the part begun is kept for the next run,
 * which asks for the bytes after it. An origin that cannot resume would start again from byte 0
 * at every run and never finish, so its import fails instead.
 */
async function pause(run: Run, stored: number, partial: Uint8Array, unresumable: boolean): Promise<RunOutcome> {
  const { deps } = run;
  if (unresumable) {
    return fail(
      run,
      "the origin cannot resume a fetch (it ignores Range, or compresses the file), and the file takes longer than one run",
    );
  }
  deps.resume.save({ head: partial.byteLength > 0 ? { start: stored, bytes: partial } : null, unresumable });
  await releaseLease(deps.db, run.target.on, run.held, deps.clock());
  return { kind: "continue" };
}

/** Renews the lease while no part is stored; false when it was lost. */
async function keepLease(run: Run): Promise<boolean> {
  const renewed = await renewLease(run.deps.db, run.target.on, run.held, run.deps.clock() + run.deps.limits.leaseMs);
  if (renewed.held) run.held.lease = renewed.lease;
  return renewed.held;
}

/** Stores one part in R2 and records it, renewing the lease; null when the lease was lost. */
async function storePart(
  run: Run,
  upload: R2MultipartUpload,
  partNumber: number,
  bytes: Uint8Array,
): Promise<ImportPart | null> {
  const { deps } = run;
  const uploaded = await upload.uploadPart(partNumber, bytes);
  const part = { partNumber, size: bytes.byteLength, etag: uploaded.etag };
  const now = deps.clock();
  const until = now + deps.limits.leaseMs;
  const recorded = await recordPart(deps.db, run.target.on, run.held, run.row.project_id, part, now, until);
  if (!recorded.held) return null;
  run.held.lease = recorded.lease;
  return part;
}

/**
 * The file is whole: R2 assembles it (unless an earlier run did, `upload` null), and the import
 * ends as its target goes on: a video goes `importing` → `uploaded` by the rule every upload ends
 * with, its encoding queued as `markUploaded` (src/uploads/complete.ts) queues it; an added audio
 * track is asked of its video's coordinator.
 */
async function finish(run: Run, upload: R2MultipartUpload | null, parts: ImportPart[]): Promise<RunOutcome> {
  const { deps } = run;
  const completed = parts.map(({ partNumber, etag }) => ({ partNumber, etag }));
  if (upload) await upload.complete(completed);
  const finished = await run.target.finish(run.held, run.row, canonicalParts(completed), deps.clock());
  return finished ? { kind: "uploaded" } : { kind: "skipped" };
}

async function fail(run: Run, reason: string): Promise<RunOutcome> {
  const failed = await run.target.fail(run.row, run.held.lease, reason);
  return failed ? { kind: "failed", reason } : { kind: "skipped" };
}

/** A transient failure: counted; the last one allowed fails the import, else a later run tries again. */
async function transient(run: Run, reason: string): Promise<RunOutcome> {
  const { deps, target } = run;
  const failures = await countFailure(deps.db, target.on, run.held);
  if (failures === null) return { kind: "skipped" };
  if (failures >= deps.limits.maxFailures) return fail(run, `${failures} transient failures, the last: ${reason}`);
  await releaseLease(deps.db, target.on, run.held, deps.clock());
  return { kind: "retry", delaySeconds: deps.limits.retrySeconds };
}
