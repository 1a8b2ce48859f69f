import { type PartStep, partSize } from "../../../media-plan/files.mjs";
import { storyboard } from "../../../media-plan/pictures.mjs";
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
import type { NewUnit, SegmentRow, SegmentsUnit, TilesUnit, Unit } from "./coordinator-store";
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

/**
 * The work a background job holds its slot for, at most about: with one background slot (a
 * 2-core machine's `npm run dev`), another project's short video waits for a slot about this long
 * for each of its background units (its poster, its segments, its storyboard, its files), so its
 * every job is short too. Every background kind keeps its jobs about this short: a run of segments
 * and a storyboard's tiles are cut to what the video's jobs of that kind did in this time
 * (`itemsPerJob`); a file (the MP4, the M4A) is made a part per job (media-plan/files.mjs); the
 * poster and the storyboard's sprite are one picture each. docs/encoding.md, "Short jobs".
 */
export const BACKGROUND_JOB_MS = 4_000;
/** Tiles a storyboard job makes before the video's pace at them is known. */
const TILES_GUESS = 8;

/** A span of items (segments, storyboard cues): `from` to `to` (exclusive). */
export type Run = { from: number; to: number };

/**
 * The spans of `count` items that are `missing` and not `covered`, in order, each at most `length`
 * long.
 */
export function missingSpans(count: number, missing: (i: number) => boolean, length = count): Run[] {
  const runs: Run[] = [];
  let runStart: number | null = null;
  for (let i = 0; i <= count; i++) {
    const gap = i < count && missing(i);
    if (gap && runStart === null) runStart = i;
    if (runStart !== null && (!gap || i - runStart === length)) {
      runs.push({ from: runStart, to: i });
      runStart = gap ? i : null;
    }
  }
  return runs;
}

/**
 * The background runs the plan still needs: every segment that some rendition lacks (`storedOf`)
 * and no background unit covers (`covered`), in runs of at most `runLength`, in order.
 */
export function missingRuns(
  plan: Plan,
  covered: ReadonlySet<number>,
  storedOf: (rendition: string) => ReadonlySet<number>,
): Run[] {
  const stored = plan.renditions.map((r) => storedOf(r.resolution));
  const missing = (i: number) => !covered.has(i) && stored.some((have) => !have.has(i));
  return missingSpans(segmentCount(plan), missing, runLength(plan));
}

/**
 * The units the plan still needs beside those the store has (each added unless one of its id is
 * there): the poster, first of the background work (interactive slots are for probes and
 * viewers); a background run for every segment neither stored nor covered by a run the store
 * `has` (`missingRuns`); the storyboard's tiles not stored nor covered by a tiles unit, after the
 * first run of segments, and once every tile is stored, the storyboard's sprite.
 */
export function missingUnits(
  plan: Plan,
  has: {
    poster: boolean;
    storyboard: boolean;
    runs: readonly SegmentsUnit[];
    tiles: readonly TilesUnit[];
    tileStored: (cue: number) => boolean;
  },
  storedOf: (rendition: string) => ReadonlySet<number>,
): NewUnit[] {
  const units: NewUnit[] = [];
  if (!has.poster) units.push({ id: "poster", kind: "still", priority: "background", rank: -1e15 });
  const covered = new Set<number>();
  for (const run of has.runs) for (let i = run.from; i < run.to; i++) covered.add(i);
  for (const { from, to } of missingRuns(plan, covered, storedOf)) {
    units.push({ id: `run-${from}`, kind: "segments", priority: "background", rendition: null, from, to, rank: from });
  }
  if (!has.storyboard) {
    const cues = storyboard(plan).cues.length;
    const tiling = new Set<number>();
    for (const unit of has.tiles) for (let i = unit.from; i < unit.to; i++) tiling.add(i);
    const missing = missingSpans(cues, (cue) => !tiling.has(cue) && !has.tileStored(cue));
    for (const { from, to } of missing) {
      units.push({ id: `tiles-${from}`, kind: "tiles", priority: "background", from, to, rank: 0.5 });
    }
    if (missing.length === 0 && tiling.size === 0) {
      units.push({ id: "storyboard", kind: "storyboard", priority: "background", rank: 0.5 });
    }
  }
  return units;
}

/**
 * How many items of a span a background job makes: what fits in BACKGROUND_JOB_MS at the video's
 * `pace` at them (milliseconds per item, from its last jobs of that kind), or `guess` before any;
 * at least one, at most `span`.
 */
export function itemsPerJob(pace: number | null, guess: number, span: number): number {
  const fitting = pace === null ? guess : Math.floor(BACKGROUND_JOB_MS / Math.max(1, pace));
  return Math.max(1, Math.min(span, fitting));
}

/** The video's pace at a kind after a job of it took `ms` for `items` items: the last two jobs weigh alike. */
export function nextPace(pace: number | null, ms: number, items: number): number {
  const observed = ms / Math.max(1, items);
  return pace === null ? observed : (pace + observed) / 2;
}

/** The kind whose pace sizes a unit's jobs (a background run's, a storyboard's tiles'), or null. */
export function pacedKind(unit: Unit): "run" | "tiles" | null {
  if (unit.kind === "segments" && unit.rendition === null) return "run";
  return unit.kind === "tiles" ? "tiles" : null;
}

/** How many items a paced unit's job makes before the video's pace at them is known. */
export function itemsGuess(unit: SegmentsUnit | TilesUnit): number {
  return unit.kind === "tiles" ? TILES_GUESS : unit.to - unit.from;
}

/** Segments a viewer's on-demand job makes: the one asked for and the next few, which come next. */
export const LOOKAHEAD = 3;

/** A viewer's unit: segment `index` of `rendition` and the next few, made now on an interactive slot. */
export function viewerUnit(plan: Plan, rendition: string, index: number, rank: number): NewUnit {
  const to = Math.min(segmentCount(plan), index + LOOKAHEAD);
  return {
    id: `live-${rendition}-${index}`,
    kind: "segments",
    priority: "interactive",
    rendition,
    from: index,
    to,
    rank,
  };
}

/**
 * The viewers' units a viewer's ask for segment `index` of `rendition` makes stale: those nobody
 * waits on any more (`waited`: what viewers wait for now, `segmentWaited`) that the ask does not
 * continue (another rendition, or not at nor just after their span). They were making segments
 * ahead of a viewer who has moved on (sought elsewhere, or to another rendition), and would hold
 * the interactive slots the ask needs; their segments made are kept.
 */
export function staleViewerUnits(
  units: readonly Unit[],
  waited: ReadonlySet<string>,
  ask: { rendition: string; index: number },
): SegmentsUnit[] {
  return units.filter((unit): unit is SegmentsUnit => {
    if (unit.kind !== "segments" || unit.priority !== "interactive" || unit.rendition === null) return false;
    if (unit.rendition === ask.rendition && ask.index >= unit.from && ask.index <= unit.to) return false;
    for (let i = unit.from; i < unit.to; i++) if (waited.has(`${unit.rendition}/${i}`)) return false;
    return true;
  });
}

/**
 * The unit a video gets as it becomes playable, ahead of any viewer: the lowest rendition's first
 * segments, where a player starts (hls.js starts on the lowest rendition), made at once on an
 * interactive slot, so a viewer pressing play does not wait for the background's first run.
 */
export function firstView(plan: Plan, rank: number): NewUnit {
  return viewerUnit(plan, (plan.renditions[0] as Plan["renditions"][number]).resolution, 0, rank);
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

/** The unit of a file put together from the stored segments, a part per job: the MP4 first, then the M4A. */
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
 * segment of it, and the answer is null when none does; for a file's unit, `step` is its next
 * part (media-plan/files.mjs `nextPart`); for a speech unit, `speech` is its track's request,
 * and the answer is null without one (the track is no longer heard).
 */
export function jobFor(
  unit: Unit,
  base: JobBase,
  plan: Plan | null,
  missing: string[],
  { step = null, speech = null }: { step?: PartStep | null; speech?: SpeechRequest | null } = {},
): Job | null {
  if (unit.kind === "probe") return { ...base, kind: "probe" };
  if (!plan) throw new Error(`a ${unit.kind} unit before the plan`);
  switch (unit.kind) {
    case "still":
      return { ...base, kind: "still", plan, time: plan.posterTime, width: null };
    case "frame":
      return { ...base, kind: "still", plan, time: frameTime(plan, unit.frame), width: unit.width };
    case "tiles":
      return { ...base, kind: "tiles", plan, from: unit.from, to: unit.to };
    case "storyboard":
      return { ...base, kind: "storyboard", plan };
    case "mp4":
    case "m4a":
      if (!step) throw new Error(`a ${unit.kind} unit without its step`);
      return { ...base, kind: unit.kind, plan, partSize: partSize(plan, unit.kind), ...step };
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
