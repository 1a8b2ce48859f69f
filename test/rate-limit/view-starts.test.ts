import { describe, expect, it } from "vitest";
import { ViewStarts } from "../../src/rate-limit/view-starts";

// The views one client address may start (20 of a video a minute: docs/analytics.md), pure,
// with time given.

const MINUTE = 60_000;
const t0 = 1_700_000_000_000;
const starts = () => new ViewStarts(20, MINUTE, 10 * MINUTE);
const views = (count: number, prefix = "view") => Array.from({ length: count }, (_, i) => `${prefix}-${i}`);

describe("ViewStarts", () => {
  it("starts 20 views of a video a minute, and every beacon of a started view counts", () => {
    const address = starts();
    for (const [i, view] of views(20).entries()) expect(address.admit("video-a", view, t0 + i * 1000)).toBe(true);
    // The 21st view of the minute, and any beacon of it while the minute is full, counts nothing.
    expect(address.admit("video-a", "late", t0 + 30_000)).toBe(false);
    expect(address.admit("video-a", "late", t0 + 40_000)).toBe(false);
    // The started views go on counting, beacon after beacon.
    for (const view of views(20)) expect(address.admit("video-a", view, t0 + 50_000)).toBe(true);
    // Another video's views are its own.
    for (const view of views(20, "b")) expect(address.admit("video-b", view, t0 + 50_000)).toBe(true);
    expect(address.admit("video-b", "late", t0 + 50_000)).toBe(false);
    // A minute after the first start, one more may start: the late view, at its next beacon.
    expect(address.admit("video-a", "late", t0 + MINUTE)).toBe(true);
    expect(address.admit("video-a", "later", t0 + MINUTE)).toBe(false);
    expect(address.admit("video-a", "later", t0 + MINUTE + 1000)).toBe(true);
  });

  it("bounds the views started in any window of a minute, not per calendar minute", () => {
    const address = starts();
    for (const view of views(20)) expect(address.admit("video", view, t0 + 59_000)).toBe(true);
    expect(address.admit("video", "next", t0 + 61_000)).toBe(false);
    expect(address.admit("video", "next", t0 + 59_000 + MINUTE)).toBe(true);
  });

  it("forgets a view without a beacon for 10 minutes: its next beacon starts it again, if there is room", () => {
    const address = starts();
    expect(address.admit("video", "paused", t0)).toBe(true);
    for (const view of views(19)) expect(address.admit("video", view, t0 + 1000)).toBe(true);
    // Paused for 10 minutes, while 20 others started in the last one.
    for (const view of views(20, "new")) expect(address.admit("video", view, t0 + 10 * MINUTE - 1000)).toBe(true);
    expect(address.admit("video", "paused", t0 + 10 * MINUTE)).toBe(false);
    expect(address.admit("video", "paused", t0 + 11 * MINUTE)).toBe(true);
    // Remembered while its beacons come, however long the view lasts.
    for (let minute = 12; minute < 60; minute++)
      expect(address.admit("video", "paused", t0 + minute * MINUTE)).toBe(true);
  });

  it("keeps in memory only the views seen in the last 10 minutes", () => {
    const address = starts();
    for (let minute = 0; minute < 30; minute++) {
      for (const view of views(20, `m${minute}`)) address.admit("video", view, t0 + minute * MINUTE);
    }
    // The sweep runs once a minute: the views of the last 10 minutes, and at most a minute more.
    expect(address.remembered).toBeLessThanOrEqual(11 * 20);
    expect(address.remembered).toBeGreaterThanOrEqual(10 * 20);
  });
});
