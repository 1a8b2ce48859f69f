import {
  frameTime,
  type Plan,
  type Probe,
  planEncoding,
  runLength,
  segmentCount,
  Unplannable,
} from "../../../media-plan/plan.mjs";
import { type Job, MAX_SPEECH_SECONDS, type Result } from "../../../media-plan/protocol.mjs";
import { TEST_VIDEO_SECONDS, type VideoRow } from "../../videos/model";
import type { FileKind } from "./coordinator-files";
import type { SpeechRequest } from "./coordinator-speech-store";
import type { NewUnit, SegmentRow, SegmentsUnit, Unit } from "./coordinator-store";
import { type EncodeSettings, planSettings } from "./encode-settings";

/**
 * The coordinator's decisions that need nothing but the plan and what is stored (coordinator.ts
 * loads those, applies the answer and stores it): which segment runs are still needed, where a
 * failed run starts again, when the segments are done, which files come after them, whether a job
 * may store a segment, and each unit's job message.
 */

/** Tries per unit of work: a job that fails or goes silent this many times errors the video. */
export const MAX_TRIES = 3;
/** A running job not heard from this long has lost its encoder: it is taken over. */
export const SILENCE_MS = 60_000;
/** A running job not heard from this long is asked about (a restarted encoder says it has none). */
export const QUIET_MS = 15_000;
/** A segment being stored by a job is reserved to it this long, then another job may store it. */
export const RESERVATION_MS = 5 * 60_000;

/** Bytes per MP4 (and M4A) part: R2 wants every part but the last the same size; no request over 50 MiB. */
export const MP4_PART_BYTES = 32 * 1024 * 1024;

/** A segments run: segments `from` to `to` (exclusive). */
export type Run = { from: number; to: number };

/**
 * The background runs the plan still needs: every segment that some rendition lacks (`storedOf`)
 * and no background unit covers (`covered`), in runs of at most `runLength`, in order.
 */
export function missingRuns(
  plan: Plan,
  covered: ReadonlySet<number>,
  storedOf: (rendition: string) => ReadonlySet<number>,
): Run[] {
  const count = segmentCount(plan);
  const missing = new Set<number>();
  for (const r of plan.renditions) {
    const have = storedOf(r.resolution);
    for (let i = 0; i < count; i++) if (!have.has(i) && !covered.has(i)) missing.add(i);
  }
  return runsOf(missing, count, runLength(plan));
}

/** The segments of `missing` (of `count`), in runs of consecutive ones of at most `length`, in order. */
export function runsOf(missing: ReadonlySet<number>, count: number, length: number): Run[] {
  const runs: Run[] = [];
  let runStart: number | null = null;
  for (let i = 0; i <= count; i++) {
    const gap = i < count && missing.has(i);
    if (gap && runStart === null) runStart = i;
    if (runStart !== null && (!gap || i - runStart === length)) {
      runs.push({ from: runStart, to: i });
      runStart = gap ? i : null;
    }
  }
  return runs;
}

/**
 * The units the plan still needs beside those the store has (each added unless one of its id is
 * there): the poster, first of the background work (interactive slots are for probes and
 * viewers); the storyboard, after the first run of segments; and a background run for every
 * segment neither stored nor covered by a run the store `has` (`missingRuns`).
 */
export function missingUnits(
  plan: Plan,
  has: { poster: boolean; storyboard: boolean; runs: readonly SegmentsUnit[] },
  storedOf: (rendition: string) => ReadonlySet<number>,
): NewUnit[] {
  const units: NewUnit[] = [];
  if (!has.poster) units.push({ id: "poster", kind: "still", priority: "background", rank: -1e15 });
  if (!has.storyboard) units.push({ id: "storyboard", kind: "storyboard", priority: "background", rank: 0.5 });
  const covered = new Set<number>();
  for (const run of has.runs) for (let i = run.from; i < run.to; i++) covered.add(i);
  for (const { from, to } of missingRuns(plan, covered, storedOf)) {
    units.push({ id: `run-${from}`, kind: "segments", priority: "background", rendition: null, from, to, rank: from });
  }
  return units;
}

/**
 * Speech is heard in chunks of MAX_SPEECH_SECONDS, one job each: a few seconds of an encoder's
 * work, so one video's captions never hold a slot long (docs/generated-captions.md).
 */
export function speechChunks(plan: Plan): number {
  return Math.max(1, Math.ceil(plan.duration / MAX_SPEECH_SECONDS - 1e-9));
}

/** The seconds of the video chunk `chunk` spans. */
export function speechSpan(plan: Plan, chunk: number): { from: number; to: number } {
  const from = chunk * MAX_SPEECH_SECONDS;
  return { from, to: Math.min(plan.duration, from + MAX_SPEECH_SECONDS) };
}

/** Where speech units run among a video's own: after its segments and storyboard, in order. */
const SPEECH_RANK = 1e12;

/** The units that hear the track of `language`: one per chunk, background work. */
export function speechUnits(plan: Plan, language: string): NewUnit[] {
  return Array.from({ length: speechChunks(plan) }, (_, chunk) => ({
    id: `speech-${language}-${chunk}`,
    kind: "speech" as const,
    priority: "background" as const,
    language,
    chunk,
    rank: SPEECH_RANK + chunk,
  }));
}

/** The unit of a file put together from the stored segments: the MP4 first, then the M4A. */
export function fileUnit(file: FileKind): NewUnit {
  return { id: file, kind: file, priority: "background", rank: file === "mp4" ? -3e15 : -2.9e15 };
}

/** The renditions a segments unit makes: a viewer's one, else every rendition of the plan. */
export function renditionsOf(unit: SegmentsUnit, plan: Plan): string[] {
  return unit.rendition ? [unit.rendition] : plan.renditions.map((r) => r.resolution);
}

/** Where a failed segments unit starts again: its first segment one of its renditions lacks (`to` when none does). */
export function firstMissing(
  unit: SegmentsUnit,
  plan: Plan,
  isStored: (rendition: string, index: number) => boolean,
): number {
  const renditions = renditionsOf(unit, plan);
  let from = unit.from;
  while (from < unit.to && renditions.every((r) => isStored(r, from))) from += 1;
  return from;
}

/**
 * Whether the job of `unit` (`jobId`; null when it is void) may store segment `index` of
 * `rendition`, which stands as `current` in the store: `store` it (it is then reserved to the job),
 * `skip` it (stored already, or another job has been storing it for less than RESERVATION_MS), or
 * `void` (the job is, or the segment is not its own).
 */
export function segmentVerdict(
  unit: Unit | null,
  jobId: string,
  segment: { rendition: string; index: number; current: SegmentRow | null },
  now: number,
): "store" | "skip" | "void" {
  const { rendition, index, current } = segment;
  if (unit?.kind !== "segments" || index < unit.from || index >= unit.to) return "void";
  if (unit.rendition !== null && unit.rendition !== rendition) return "void";
  return reservationVerdict(current, jobId, now);
}

/**
 * Whether job `jobId` may store a segment of its own that stands as `current`: `skip` it when it
 * is stored already, or another job has been storing it for less than RESERVATION_MS, so a
 * segment's served bytes never change; else `store` it.
 */
export function reservationVerdict(current: SegmentRow | null, jobId: string, now: number): "store" | "skip" {
  if (current?.state === "stored") return "skip";
  if (current && current.job !== jobId && current.at > now - RESERVATION_MS) return "skip";
  return "store";
}

/** A probe's, an MP4's or an M4A's result without what it made: as good as a failure. */
export function madeNothing(unit: Unit, result: Result): boolean {
  if (result.status !== "done") return false;
  return (
    (unit.kind === "probe" && !result.probe) ||
    (unit.kind === "mp4" && !result.mp4) ||
    (unit.kind === "m4a" && !result.m4a) ||
    (unit.kind === "speech" && !result.speech)
  );
}

/** Whether every segment of every rendition, the poster and the storyboard are stored, and no segments unit is left. */
export function segmentsDone(
  plan: Plan,
  done: { storedSegments: number; segmentUnits: number; poster: boolean; storyboard: boolean },
): boolean {
  const total = plan.renditions.length * segmentCount(plan);
  return done.storedSegments >= total && done.segmentUnits === 0 && done.poster && done.storyboard;
}

/** The files put together from the segments once they are all stored: the MP4 when asked for, the M4A when there is audio. */
export function filesOf(plan: Plan): FileKind[] {
  return [...(plan.mp4 ? (["mp4"] as const) : []), ...(plan.audio ? (["m4a"] as const) : [])];
}

/**
 * Where the video's source is: the R2 key its jobs read, and for a clip
 * (docs/import-clips-search.md#clips-as-videos-clipof) the span of that source it is made of
 * (seconds), null for any other video.
 */
export type SourceOf = { key: string; clip: { start: number; end: number } | null };

export function sourceOf(row: VideoRow): SourceOf {
  const clip = row.clip_of !== null && row.clip_start !== null && row.clip_end !== null;
  return { key: row.source_key, clip: clip ? { start: row.clip_start as number, end: row.clip_end as number } : null };
}

/**
 * Whether the video is a test video (docs/api-guide.md#test-mode-and-going-live), encoded from its
 * first seconds only.
 */
export function isTestVideo(row: VideoRow): boolean {
  return row.livemode === 0;
}

type JobBase = Pick<Job, "version" | "jobId" | "priority" | "callback">;

/**
 * The job message of `unit`, from what every job carries (`base`) and the plan (null only for the
 * probe, which has none yet); for a segments unit, `missing` is its renditions that still lack a
 * segment of it, and the answer is null when none does; for a speech unit, `speech` is its track's
 * request, and the answer is null without one (the track is no longer heard).
 */
export function jobFor(
  unit: Unit,
  base: JobBase,
  plan: Plan | null,
  missing: string[],
  speech: SpeechRequest | null = null,
): Job | null {
  if (unit.kind === "probe") return { ...base, kind: "probe" };
  if (!plan) throw new Error(`a ${unit.kind} unit before the plan`);
  switch (unit.kind) {
    case "still":
      return { ...base, kind: "still", plan, time: plan.posterTime, width: null };
    case "frame":
      return { ...base, kind: "still", plan, time: frameTime(plan, unit.frame), width: unit.width };
    case "storyboard":
      return { ...base, kind: "storyboard", plan };
    case "mp4":
    case "m4a":
      return { ...base, kind: unit.kind, plan, partSize: MP4_PART_BYTES };
    case "segments":
      if (missing.length === 0) return null;
      return { ...base, kind: "segments", plan, from: unit.from, to: unit.to, renditions: missing };
    case "audio":
      return { ...base, kind: "audio", plan, from: unit.from, to: unit.to };
    case "speech":
      if (!speech) return null;
      return {
        ...base,
        kind: "speech",
        plan,
        language: speech.heardAs,
        recognizer: speech.recognizer,
        ...speechSpan(plan, unit.chunk),
      };
  }
}

/**
 * The plan of a probed source with the settings the video claimed, cut to its first seconds for a
 * test video and to its span for a clip; or, for a source the service does not encode, the
 * video's error message.
 */
export function planOf(
  probe: Probe,
  video: { settings: EncodeSettings; testMode: boolean; clip: SourceOf["clip"] },
): { plan: Plan } | { unplannable: string } {
  try {
    const options = { maxDuration: video.testMode ? TEST_VIDEO_SECONDS : undefined, clip: video.clip };
    return { plan: planEncoding(probe, planSettings(video.settings), options) };
  } catch (error) {
    if (!(error instanceof Unplannable)) throw error;
    return { unplannable: `The source is not a video this service encodes: ${error.message}.` };
  }
}
