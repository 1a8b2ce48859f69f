// @ts-check
import { describe, expect, it } from "vitest";
import { frameAt, JPEG_MAX_SIDE, stillSize, storyboard } from "../pictures.mjs";
import { frameTime, planEncoding } from "../plan.mjs";
import { probed } from "./probes.mjs";

/** @param {Partial<import("../plan.mjs").Probe>} [extra] */
const planOf = (extra = {}) =>
  planEncoding(probed(extra), { enabledResolutions: ["360p", "720p", "1080p"], mp4: true, watermark: null });

describe("stills", () => {
  it("snap a time to the nearest frame within the video", () => {
    const plan = planOf({ frameRate: 30000 / 1001, duration: 10 });
    expect(frameAt(plan, 0)).toBe(0);
    expect(frameAt(plan, 1)).toBe(30);
    expect(frameAt(plan, 1.02)).toBe(31);
    expect(frameAt(plan, 10)).toBe(plan.frames - 1);
    expect(Math.abs(frameTime(plan, frameAt(plan, 7.3)) - 7.3)).toBeLessThan(0.5 / 29.97 + 1e-9);
  });

  it("keep the highest rendition's aspect at any width, with an even height", () => {
    const plan = planOf();
    expect(stillSize(plan, null)).toEqual({ width: 1920, height: 1080 });
    expect(stillSize(plan, 1920)).toEqual({ width: 1920, height: 1080 });
    expect(stillSize(plan, 640)).toEqual({ width: 640, height: 360 });
    expect(stillSize(plan, 17)).toEqual({ width: 17, height: 10 });
    expect(stillSize(plan, 16)).toEqual({ width: 16, height: 10 });
    const portrait = planOf({ width: 1080, height: 1920 });
    expect(stillSize(portrait, 100)).toEqual({ width: 100, height: 178 });
  });
});

describe("the storyboard", () => {
  /** Every rule of docs/encoding.md#frames-and-the-storyboard on one storyboard. @param {import("../plan.mjs").Plan} plan */
  function expectValid(plan) {
    const board = storyboard(plan);
    const { cues } = board;
    expect(cues.length).toBeGreaterThanOrEqual(1);
    expect(cues.length).toBeLessThanOrEqual(200);
    expect(cues[0]?.startMs).toBe(0);
    expect(cues.at(-1)?.endMs).toBe(Math.round(plan.duration * 1000));
    for (const [i, cue] of cues.entries()) {
      if (i > 0) expect(cue.startMs).toBe(cues[i - 1]?.endMs);
      expect(cue.endMs).toBeGreaterThan(cue.startMs);
      if (plan.duration <= 2000) expect(cue.endMs - cue.startMs).toBeLessThanOrEqual(10_000);
      const at = frameTime(plan, cue.frame) * 1000;
      expect(at).toBeGreaterThanOrEqual(cue.startMs);
      expect(at).toBeLessThan(cue.endMs);
      expect(cue.frame).toBeLessThan(plan.frames);
      expect(cue.x).toBe((i % board.columns) * board.tileWidth);
      expect(cue.y).toBe(Math.floor(i / board.columns) * board.tileHeight);
    }
    expect(board.tileWidth).toBeLessThanOrEqual(320);
    expect(board.rows).toBe(Math.ceil(cues.length / board.columns));
    expect(board.columns * board.tileWidth).toBeLessThanOrEqual(JPEG_MAX_SIDE);
    expect(board.rows * board.tileHeight).toBeLessThanOrEqual(JPEG_MAX_SIDE);
    return board;
  }

  it("has cues of at most 10 s from 0 to the end, none over, for videos up to 2,000 s", () => {
    expect(expectValid(planOf({ duration: 3 })).cues).toHaveLength(1);
    expect(expectValid(planOf({ duration: 12 })).cues).toHaveLength(2);
    expect(expectValid(planOf({ duration: 600 })).cues).toHaveLength(60);
    // 17,982 frames at 29.97 last 600.001 s: 61 equal cues of 9.84 s.
    expect(expectValid(planOf({ duration: 600, frameRate: 30000 / 1001 })).cues).toHaveLength(61);
    expect(expectValid(planOf({ duration: 601 })).cues).toHaveLength(61);
    expect(expectValid(planOf({ duration: 2000 })).cues).toHaveLength(200);
  });

  it("has 200 equal cues for a longer video, and one frame-long cue for a one-frame video", () => {
    const long = expectValid(planOf({ duration: 10 * 3600, width: 640, height: 360 }));
    expect(long.cues).toHaveLength(200);
    expect(long.cues[0]?.endMs).toBe(180_000);
    expect(expectValid(planOf({ duration: 2000.5 })).cues).toHaveLength(200);
    const one = expectValid(planOf({ duration: 0.5, frameRate: 1 }));
    expect(one.cues).toEqual([{ startMs: 0, endMs: 1000, frame: 0, x: 0, y: 0 }]);
  });

  it("tiles 240 px wide (the picture's own width when narrower), ten to a row", () => {
    const board = storyboard(planOf({ duration: 600 }));
    expect(board).toMatchObject({ tileWidth: 240, tileHeight: 136, columns: 10, rows: 6 });
    const narrow = storyboard(planOf({ width: 160, height: 90, duration: 25 }));
    expect(narrow).toMatchObject({ tileWidth: 160, tileHeight: 90, columns: 3, rows: 1 });
  });

  it("stays within a JPEG's 65,500 px a side for a tall, long video (208×3328, 1,950 s), and at any aspect allowed", () => {
    const tall = expectValid(planOf({ width: 208, height: 3328, duration: 1950 }));
    expect(tall).toMatchObject({ tileWidth: 20, tileHeight: 320, columns: 10, rows: 20 });
    for (const [width, height] of [
      [208, 3328],
      [3328, 208],
      [1080, 17280],
      [240, 3840],
      [1080, 1920],
      [100, 1600],
    ]) {
      for (const duration of [1, 600, 1900, 2000, 2001, 12 * 3600]) expectValid(planOf({ width, height, duration }));
    }
  });
});
