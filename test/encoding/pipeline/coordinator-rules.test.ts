import { describe, expect, it } from "vitest";
import { partSize } from "../../../media-plan/files.mjs";
import { storyboard } from "../../../media-plan/pictures.mjs";
import { planEncoding, runLength, segmentCount } from "../../../media-plan/plan.mjs";
import {
  BACKGROUND_JOB_MS,
  filesOf,
  firstMissing,
  itemsPerJob,
  jobFor,
  madeNothing,
  missingRuns,
  missingUnits,
  nextPace,
  planOf,
  RESERVATION_MS,
  segmentsDone,
  segmentVerdict,
  staleViewerUnits,
} from "../../../src/encoding/pipeline/coordinator-rules";
import type { SegmentsUnit, TilesUnit, Unit } from "../../../src/encoding/pipeline/coordinator-store";
import { Waiters } from "../../../src/encoding/pipeline/coordinator-waiters";
import { probeFacts } from "./support";

/** The coordinator's decisions as plain functions (coordinator-rules.ts), and its waiting viewers. */

const SETTINGS = { enabledResolutions: ["360p", "720p"], mp4: true, watermark: null } as const;
/** A 60 s 720p source's plan: 360p and 720p, 15 segments of 4 s, with audio and an MP4. */
const plan = planEncoding(probeFacts(60), SETTINGS);

const STATE = {
  id: "u",
  priority: "background",
  rank: 0,
  tries: 0,
  job: null,
  slot: null,
  started: null,
  heard: null,
} as const;

/** A background run of segments `from` to `to`, or one rendition's. */
function run(from: number, to: number, rendition: string | null = null): SegmentsUnit {
  return { ...STATE, kind: "segments", rendition, from, to };
}

/** A unit of storyboard tiles `from` to `to`. */
function tiles(from: number, to: number): TilesUnit {
  return { ...STATE, kind: "tiles", from, to };
}

/** A unit of a kind that makes one thing (the probe, the poster, a file, the storyboard). */
function whole(
  kind: "probe" | "still" | "storyboard" | "mp4" | "m4a",
  priority: Unit["priority"] = "background",
): Unit {
  return { ...STATE, kind, priority };
}

const none = () => new Set<number>();
const base = {
  version: 2,
  jobId: "j",
  priority: "background",
  callback: { baseUrl: "https://x", token: "t" },
} as const;

describe("the coordinator's rules", () => {
  it("needs every segment in runs of runLength, in order, until each rendition has it or a unit covers it", () => {
    const count = segmentCount(plan);
    const length = runLength(plan);
    const runs = missingRuns(plan, new Set(), none);
    expect(runs[0]).toEqual({ from: 0, to: length });
    expect(runs.at(-1)?.to).toBe(count);
    expect(runs.flatMap(({ from, to }) => Array.from({ length: to - from }, (_, i) => from + i))).toEqual(
      Array.from({ length: count }, (_, i) => i),
    );
    // Segment 1 stored in 360p only is still needed (for 720p); 2 covered by a unit is not; 3 stored
    // in both is not.
    const stored = (rendition: string) => new Set(rendition === "360p" ? [1, 3] : [3]);
    const around = missingRuns(plan, new Set([2]), stored).filter((missing) => missing.from < 5);
    expect(around).toEqual([
      { from: 0, to: 2 },
      { from: 4, to: Math.min(count, 4 + length) },
    ]);
    const all = (rendition: string) => new Set(rendition ? Array.from({ length: count }, (_, i) => i) : []);
    expect(missingRuns(plan, new Set(), all)).toEqual([]);
  });

  it("needs the poster first, the storyboard's tiles after the first run, and a run for what no run covers", () => {
    const length = runLength(plan);
    const nothing = { poster: false, storyboard: false, runs: [], tiles: [], tileStored: () => false };
    const fresh = missingUnits(plan, nothing, none);
    const cues = storyboard(plan).cues.length;
    expect(fresh.map((u) => u.id)).toEqual([
      "poster",
      ...missingRuns(plan, new Set(), none).map((r) => `run-${r.from}`),
      "tiles-0",
    ]);
    expect(fresh.at(-1)).toMatchObject({ kind: "tiles", from: 0, to: cues });
    const ranked = [...fresh].sort((a, b) => a.rank - b.rank).map((u) => u.id);
    expect(ranked.slice(0, 3)).toEqual(["poster", "run-0", "tiles-0"]);
    expect(fresh.find((u) => u.id === "run-0")).toEqual({
      id: "run-0",
      kind: "segments",
      priority: "background",
      rendition: null,
      from: 0,
      to: length,
      rank: 0,
    });
    // What the store has is not needed again: a run covering the start, the pictures stored.
    const later = missingUnits(
      plan,
      { poster: true, storyboard: true, runs: [run(0, length)], tiles: [], tileStored: () => false },
      none,
    );
    expect(later.map((u) => u.id)).not.toContain("run-0");
    expect(later.map((u) => u.id)).not.toContain("poster");
    expect(later[0]).toMatchObject({ kind: "segments", from: length });
    // Tiles stored or being made are not needed again; the sprite once every tile is stored.
    const some = missingUnits(
      plan,
      {
        ...nothing,
        poster: true,
        runs: [run(0, segmentCount(plan))],
        tiles: [tiles(0, 1)],
        tileStored: (c) => c === 2,
      },
      none,
    );
    // Six cues of 10 s: tile 0 is being made, tile 2 is stored.
    expect(some).toEqual([
      { id: "tiles-1", kind: "tiles", priority: "background", from: 1, to: 2, rank: 0.5 },
      { id: "tiles-3", kind: "tiles", priority: "background", from: 3, to: 6, rank: 0.5 },
    ]);
    const tiled = { ...nothing, poster: true, runs: [run(0, segmentCount(plan))], tileStored: () => true };
    expect(missingUnits(plan, tiled, none).map((u) => u.id)).toEqual(["storyboard"]);
    expect(missingUnits(plan, { ...tiled, tiles: [tiles(1, 2)] }, none)).toEqual([]);
  });

  it("takes a viewer's units nobody waits on for stale when a viewer asks for what they do not continue", () => {
    const viewer = (rendition: string, from: number, to: number): SegmentsUnit => ({
      ...run(from, to, rendition),
      priority: "interactive",
    });
    const units = [viewer("360p", 0, 3), viewer("720p", 10, 13), run(0, 3), viewer("360p", 40, 43)];
    // Someone still waits on 720p/11; the ask continues 360p 0-3 (at its end); the run is not a viewer's.
    const waited = new Set(["720p/11"]);
    expect(staleViewerUnits(units, waited, { rendition: "360p", index: 3 }).map((u) => u.from)).toEqual([40]);
    expect(staleViewerUnits(units, waited, { rendition: "720p", index: 60 }).map((u) => u.from)).toEqual([0, 40]);
    expect(staleViewerUnits(units, new Set(), { rendition: "720p", index: 12 }).map((u) => u.from)).toEqual([0, 40]);
  });

  it("sizes a background job by what fits in BACKGROUND_JOB_MS at the video's pace, guessing before any", () => {
    expect(itemsPerJob(null, 3, 10)).toBe(3);
    expect(itemsPerJob(null, 3, 2)).toBe(2);
    expect(itemsPerJob(BACKGROUND_JOB_MS / 4, 3, 10)).toBe(4);
    expect(itemsPerJob(BACKGROUND_JOB_MS / 4, 3, 2)).toBe(2);
    // A slow machine (an item longer than the budget) still makes one.
    expect(itemsPerJob(3 * BACKGROUND_JOB_MS, 3, 10)).toBe(1);
    expect(nextPace(null, 6000, 3)).toBe(2000);
    expect(nextPace(2000, 1000, 1)).toBe(1500);
  });

  it("starts a failed run again at its first segment one of its renditions lacks", () => {
    const stored = new Set(["360p/4", "720p/4", "360p/5"]);
    const isStored = (r: string, i: number) => stored.has(`${r}/${i}`);
    expect(firstMissing(run(4, 8), plan, isStored)).toBe(5);
    expect(firstMissing(run(4, 8, "360p"), plan, isStored)).toBe(6);
    expect(firstMissing(run(4, 5), plan, isStored)).toBe(5);
  });

  it("is done with the segments once all are stored, no segments unit is left, and the poster and storyboard are", () => {
    const total = plan.renditions.length * segmentCount(plan);
    const done = { storedSegments: total, segmentUnits: 0, poster: true, storyboard: true };
    expect(segmentsDone(plan, done)).toBe(true);
    expect(segmentsDone(plan, { ...done, storedSegments: total - 1 })).toBe(false);
    expect(segmentsDone(plan, { ...done, segmentUnits: 1 })).toBe(false);
    expect(segmentsDone(plan, { ...done, poster: false })).toBe(false);
    expect(segmentsDone(plan, { ...done, storyboard: false })).toBe(false);
  });

  it("lets a job store a segment of its own unless it is stored, or another job stores it within RESERVATION_MS", () => {
    const four = run(4, 8);
    const now = 1_000_000;
    const verdict = (
      u: Unit | null,
      rendition: string,
      index: number,
      current: Parameters<typeof segmentVerdict>[2]["current"],
    ) => segmentVerdict(u, "j", { rendition, index, current }, now);
    expect(verdict(four, "720p", 4, null)).toBe("store");
    expect(verdict(four, "720p", 8, null)).toBe("void");
    expect(verdict(null, "720p", 4, null)).toBe("void");
    expect(verdict(whole("still"), "720p", 0, null)).toBe("void");
    expect(verdict(run(4, 8, "360p"), "720p", 4, null)).toBe("void");
    expect(verdict(four, "720p", 4, { state: "stored", job: "j", at: now })).toBe("skip");
    expect(verdict(four, "720p", 4, { state: "storing", job: "other", at: now - RESERVATION_MS + 1 })).toBe("skip");
    expect(verdict(four, "720p", 4, { state: "storing", job: "other", at: now - RESERVATION_MS })).toBe("store");
    expect(verdict(four, "720p", 4, { state: "storing", job: "j", at: now })).toBe("store");
  });

  it("takes a probe's, an MP4's or an M4A's result without what it made for a failure", () => {
    const done = { version: 2, jobId: "j", status: "done" } as const;
    expect(madeNothing(whole("probe"), done)).toBe(true);
    expect(madeNothing(whole("mp4"), done)).toBe(true);
    expect(madeNothing(whole("m4a"), done)).toBe(true);
    expect(madeNothing(whole("m4a"), { ...done, m4a: { to: 1, fragments: [], origin: 0, etag: null } })).toBe(false);
    expect(madeNothing(run(0, 4), done)).toBe(false);
    expect(
      madeNothing(whole("probe"), {
        version: 2,
        jobId: "j",
        status: "failed",
        code: "encoding_failed",
        message: "x",
      }),
    ).toBe(false);
  });

  it("puts the MP4 together when asked for and the M4A when there is audio", () => {
    expect(filesOf(plan)).toEqual(["mp4", "m4a"]);
    expect(filesOf({ ...plan, mp4: false })).toEqual(["m4a"]);
    expect(filesOf({ ...plan, mp4: false, audio: false })).toEqual([]);
  });

  it("makes each unit's job message; a segments unit with nothing missing has none", () => {
    expect(jobFor(whole("probe", "interactive"), base, null, [])).toEqual({
      ...base,
      kind: "probe",
    });
    expect(jobFor(whole("still"), base, plan, [])).toMatchObject({
      kind: "still",
      time: plan.posterTime,
      width: null,
    });
    expect(jobFor({ ...STATE, kind: "frame", frame: 25, width: 320 }, base, plan, [])).toMatchObject({
      kind: "still",
      time: 1,
      width: 320,
    });
    const step = { part: 2, from: 4, to: null, sequence: 3, origin: 1020000 };
    expect(jobFor(whole("m4a"), base, plan, [], { step })).toEqual({
      ...base,
      kind: "m4a",
      plan,
      partSize: partSize(plan, "m4a"),
      ...step,
    });
    expect(() => jobFor(whole("mp4"), base, plan, [])).toThrow(/without its step/);
    expect(jobFor(tiles(1, 3), base, plan, [])).toEqual({ ...base, kind: "tiles", plan, from: 1, to: 3 });
    expect(jobFor(run(2, 6), base, plan, ["720p"])).toMatchObject({
      kind: "segments",
      from: 2,
      to: 6,
      renditions: ["720p"],
    });
    expect(jobFor(run(2, 6), base, plan, [])).toBeNull();
    expect(() => jobFor(whole("storyboard"), base, null, [])).toThrow(/before the plan/);
  });

  it("answers every viewer of what is woken, tells the others pending after their time, and says when nobody waits", async () => {
    const waiters = new Waiters();
    const abandoned: string[] = [];
    const a = waiters.waitFor("360p/1", 1000, () => abandoned.push("360p/1"));
    const b = waiters.waitFor("360p/1", 1000, () => abandoned.push("360p/1"));
    const late = waiters.waitFor("frame/1/320", 10, () => abandoned.push("frame/1/320"));
    expect(waiters.keys()).toEqual(["360p/1", "frame/1/320"]);
    waiters.wake("360p/1", "stored");
    expect(await Promise.all([a, b])).toEqual(["stored", "stored"]);
    expect(await late).toBe("pending");
    expect(abandoned).toEqual(["frame/1/320"]);
    expect(waiters.keys()).toEqual([]);
  });
});

describe("planOf", () => {
  const settings = { enabledResolutions: ["360p", "720p"], mp4: false, watermark: null } as never;
  it("plans a test video's first 10 s and a clip's span, and words a source it does not encode", () => {
    const test = planOf(probeFacts(30), { settings, testMode: true, clip: null });
    expect("plan" in test && test.plan.duration).toBe(10);
    const clip = planOf(probeFacts(30), { settings, testMode: false, clip: { start: 5, end: 9 } });
    expect("plan" in clip && [clip.plan.source.offset, clip.plan.duration]).toEqual([5, 4]);
    expect(planOf(probeFacts(0), { settings, testMode: false, clip: null })).toEqual({
      unplannable: "The source is not a video this service encodes: the video has no duration.",
    });
  });
});
