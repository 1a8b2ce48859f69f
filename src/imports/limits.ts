import { MINUTE, SECOND } from "../lib/time";

const MiB = 1024 * 1024;

/**
 * The numbers of an import (contract §19), in one place. The consumer's core takes them as a
 * parameter, so tests pass smaller ones (no test waits 60 s).
 */
export type ImportLimits = {
  /** Every R2 part but the last has this size: 8 MiB, so 50 GiB fits in 6,400 parts (R2 takes 10,000). */
  partBytes: number;
  /** The largest file (the upload limit): more is "too large". */
  maxBytes: number;
  /** No byte for this long (the answer's headers, or a read of its body) fails the import for good. */
  stallMs: number;
  /** One invocation fetches this long, then stops at a part boundary and sends its message again. */
  sliceMs: number;
  /**
   * Nor more parts than this in one invocation: each costs two subrequests (R2's uploadPart, D1's
   * batch), so 400 (3.2 GiB) keep a run under 1,000 subrequests, the lowest paid limit documented.
   */
  partsPerRun: number;
  /** A run's hold on the video, renewed at each part: a run that died is taken over after it. */
  leaseMs: number;
  /** Redirects followed, each checked as the URL was. */
  maxRedirects: number;
  /** Transient failures (a network error, a body that broke) before the import fails for good. */
  maxFailures: number;
  /** How long the queue waits before the next run after a transient failure. */
  retrySeconds: number;
};

export const IMPORT_LIMITS: ImportLimits = {
  partBytes: 8 * MiB,
  maxBytes: 50 * 1024 * MiB,
  stallMs: 60 * SECOND,
  sliceMs: 5 * MINUTE,
  partsPerRun: 400,
  leaseMs: 3 * MINUTE,
  maxRedirects: 5,
  maxFailures: 3,
  retrySeconds: 10,
};

/** The sweeper sends the message of an import whose lease ran out this long ago (or that never started). */
export const LOST_AFTER_MS = 2 * MINUTE;
