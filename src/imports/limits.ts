import { MINUTE, SECOND } from "../lib/time";
import type { Pace } from "./pace";

const MiB = 1024 * 1024;

/**
 * The numbers of an import (docs/imports.md), in one place. A run takes them as a parameter, so
 * tests pass smaller ones, or keep these and a virtual clock (no test waits 60 s).
 */
export type ImportLimits = {
  /** Every R2 part but the last has this size: 8 MiB, so 50 GiB fits in 6,400 parts (R2 takes 10,000). */
  partBytes: number;
  /** The largest file (the upload limit): more is "too large". */
  maxBytes: number;
  /**
   * The origin's pace: at least `minBytes` in any `windowMs` from the moment the file is asked for
   * (its headers must come within the window too), or the import fails for good.
   */
  pace: Pace;
  /**
   * One run fetches this long, then stops after the next bytes (keeping what it holds of its part)
   * and the next run goes on from there.
   */
  sliceMs: number;
  /**
   * Nor more parts than this in one invocation: each costs two subrequests (R2's uploadPart, D1's
   * batch), so 400 (3.2 GiB) keep a run under 1,000 subrequests, the lowest paid limit documented.
   */
  partsPerRun: number;
  /**
   * A run's hold on the video, renewed at each part, and while no part is stored, once two thirds
   * of it have gone: a run that died is taken over after it.
   */
  leaseMs: number;
  /** Redirects followed, each checked as the URL was. */
  maxRedirects: number;
  /** Transient failures (a network error, a body that broke) before the import fails for good. */
  maxFailures: number;
  /** How long before the next run after a transient failure (and, times the errors so far, after an error). */
  retrySeconds: number;
  /** Runs that throw (R2 or D1 down) before the import is given up ("could not be fetched after many tries"). */
  maxErrors: number;
};

export const IMPORT_LIMITS: ImportLimits = {
  partBytes: 8 * MiB,
  maxBytes: 50 * 1024 * MiB,
  pace: { windowMs: 60 * SECOND, minBytes: 64 * 1024 },
  sliceMs: 5 * MINUTE,
  partsPerRun: 400,
  leaseMs: 3 * MINUTE,
  maxRedirects: 5,
  maxFailures: 3,
  retrySeconds: 10,
  maxErrors: 10,
};

/** The sweeper sends the message of an import whose lease ran out this long ago (or that never started). */
export const LOST_AFTER_MS = 2 * MINUTE;
