import type { TargetRules } from "../lib/safe-targets";
import { canonicalParts } from "../uploads/parts";
import { queueEncoding } from "../videos/encode-queue";
import { COMPLETION_LEASE_MS, type VideoRow } from "../videos/model";
import { cutParts } from "./cut";
import { type FailDeps, failImport } from "./fail";
import type { ImportLimits } from "./limits";
import { nothingFor, openSource, tooLarge } from "./origin";
import {
  countFailure,
  type Held,
  type ImportPart,
  markImported,
  recordMultipart,
  recordPart,
  releaseLease,
  restartFile,
  storedParts,
  takeLease,
} from "./queries";

/**
 * One run of an import (contract §19): the imports queue's consumer calls it for one video. It
 * takes the video's lease, asks the origin for what is not stored yet, cuts the body into R2 parts
 * of one size, recording each, and stops after a time slice (the queue sends it again), on a
 * transient failure (the queue retries it), when it fails for good, or when the file is whole: then
 * the video becomes `uploaded` by the rule every upload ends with, and its encoding is queued.
 */

export type ImportDeps = FailDeps & {
  /** The origin is asked through this (the tests' fake origin). */
  fetch: typeof fetch;
  rules: TargetRules;
  limits: ImportLimits;
  encodeQueue: Queue;
};

export type RunOutcome =
  /** No run for this video now: another holds it, or it is deleted, finished or lost meanwhile. */
  | { kind: "skipped" }
  /** The source is whole and the video `uploaded`. */
  | { kind: "uploaded" }
  /** Failed for good (`errored`, `import_failed`). */
  | { kind: "failed"; reason: string }
  /** The time slice is over: send the message again to go on. */
  | { kind: "continue" }
  /** A transient failure: try again after this long. */
  | { kind: "retry"; delaySeconds: number };

type Run = { deps: ImportDeps; row: VideoRow; held: Held; startedAt: number };

export async function runImport(deps: ImportDeps, videoId: string): Promise<RunOutcome> {
  const startedAt = deps.clock();
  const row = await takeLease(deps.db, videoId, startedAt, startedAt + deps.limits.leaseMs);
  if (!row || row.import_url === null) return { kind: "skipped" };
  const run: Run = { deps, row, held: { id: row.id, lease: row.import_lease_until as string }, startedAt };
  let uploadId = row.upload_r2_id;
  if (uploadId === null) {
    const multipart = await deps.media.createMultipartUpload(row.source_key);
    if (!(await recordMultipart(deps.db, run.held, multipart.uploadId))) {
      await multipart.abort().catch(() => {});
      return { kind: "skipped" };
    }
    uploadId = multipart.uploadId;
    run.row = { ...row, upload_r2_id: uploadId };
  } else if ((await deps.media.head(row.source_key)) !== null) {
    // An earlier run completed the multipart upload, then stopped before recording it.
    return finish(run, null, await storedParts(deps.db, row.project_id, row.id));
  }
  return fetchRest(run, deps.media.resumeMultipartUpload(row.source_key, uploadId), row.import_url);
}

async function fetchRest(run: Run, upload: R2MultipartUpload, url: string): Promise<RunOutcome> {
  const { deps, row } = run;
  const { limits } = deps;
  let parts = await storedParts(deps.db, row.project_id, row.id);
  let stored = parts.reduce((sum, part) => sum + part.size, 0);
  const opened = await openSource(
    {
      fetch: deps.fetch,
      rules: deps.rules,
      maxRedirects: limits.maxRedirects,
      stallMs: limits.stallMs,
      maxBytes: limits.maxBytes,
    },
    url,
    { start: stored, validator: row.import_validator },
  );
  if (opened.kind === "failed") return fail(run, opened.reason);
  if (opened.kind === "transient") return transient(run, opened.reason);
  if (opened.kind === "whole") return finish(run, upload, parts);
  if (opened.start === 0) {
    // The first answer, or one that ignored Range (or whose file changed, If-Range): from byte 0.
    if (!(await restartFile(deps.db, run.held, row.project_id, opened.validator))) {
      await opened.body.cancel().catch(() => {});
      return { kind: "skipped" };
    }
    parts = [];
    stored = 0;
  }
  let lost = false;
  let partsThisRun = 0;
  const cut = await cutParts(
    opened.body,
    { partBytes: limits.partBytes, stallMs: limits.stallMs, maxBytes: limits.maxBytes - stored },
    async (bytes) => {
      const part = await storePart(run, upload, parts.length + 1, bytes);
      if (!part) {
        lost = true;
        return false;
      }
      parts.push(part);
      stored += part.size;
      partsThisRun++;
      return deps.clock() - run.startedAt < limits.sliceMs && partsThisRun < limits.partsPerRun;
    },
  );
  switch (cut.kind) {
    case "stalled":
      return fail(run, nothingFor(limits.stallMs));
    case "too_large":
      return fail(run, tooLarge(limits.maxBytes));
    case "broken":
      return transient(run, cut.reason);
    case "stopped":
      if (lost) return { kind: "skipped" };
      await releaseLease(deps.db, run.held, deps.clock());
      return { kind: "continue" };
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
  const recorded = await recordPart(deps.db, run.held, run.row.project_id, part, now, now + deps.limits.leaseMs);
  if (!recorded.held) return null;
  run.held.lease = recorded.lease;
  return part;
}

/**
 * The file is whole: R2 assembles it (unless an earlier run did, `upload` null), and the video goes
 * `importing` → `uploaded` by the rule every upload ends with, its encoding queued as
 * `markUploaded` (src/uploads/complete.ts) queues it.
 */
async function finish(run: Run, upload: R2MultipartUpload | null, parts: ImportPart[]): Promise<RunOutcome> {
  const { deps } = run;
  const completed = parts.map(({ partNumber, etag }) => ({ partNumber, etag }));
  if (upload) await upload.complete(completed);
  const now = deps.clock();
  const canonical = canonicalParts(completed);
  const until = now + COMPLETION_LEASE_MS;
  const uploaded = await markImported(deps.db, run.held, run.row.project_id, canonical, now, until);
  if (!uploaded) return { kind: "skipped" };
  await queueEncoding(deps.encodeQueue, uploaded);
  return { kind: "uploaded" };
}

async function fail(run: Run, reason: string): Promise<RunOutcome> {
  const failed = await failImport(run.deps, run.row, run.held.lease, reason);
  return failed ? { kind: "failed", reason } : { kind: "skipped" };
}

/** A transient failure: counted; the last one allowed fails the import, else the queue retries it. */
async function transient(run: Run, reason: string): Promise<RunOutcome> {
  const { deps } = run;
  const failures = await countFailure(deps.db, run.held);
  if (failures === null) return { kind: "skipped" };
  if (failures >= deps.limits.maxFailures) return fail(run, `${failures} transient failures, the last: ${reason}`);
  await releaseLease(deps.db, run.held, deps.clock());
  return { kind: "retry", delaySeconds: deps.limits.retrySeconds };
}
