import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { importDeps } from "../../src/imports/deps";
import { IMPORT_LIMITS } from "../../src/imports/limits";
import { PaceWindow } from "../../src/imports/pace";
import { behindReason } from "../../src/imports/words";

const { pace } = IMPORT_LIMITS;
const SECOND = 1000;
const KiB = 1024;

/** A window opened at 0, fed `arrivals` ([ms, bytes]). */
function windowWith(arrivals: [number, number][]) {
  const window = new PaceWindow(pace, 0);
  for (const [at, bytes] of arrivals) window.arrived(at, bytes);
  return window;
}

describe("an origin's pace: at least 64 KiB in any 60 s", () => {
  it("holds the real numbers", () => {
    expect(pace).toEqual({ windowMs: 60 * SECOND, minBytes: 64 * KiB });
  });

  it("an origin that sends nothing falls behind 60 s after the ask, not a moment before", () => {
    const window = windowWith([]);
    expect(window.deadline()).toBe(60 * SECOND);
    expect(window.behind(60 * SECOND - 1)).toBeNull();
    expect(window.behind(60 * SECOND)).toBe("nothing");
    expect(behindReason("nothing", pace)).toBe("nothing received for 60 s");
  });

  it("an origin that sends a byte a second falls behind at 60 s: too little, though never silent", () => {
    const window = windowWith(Array.from({ length: 60 }, (_, i): [number, number] => [i * SECOND, 1]));
    expect(window.behind(59 * SECOND)).toBeNull();
    expect(window.behind(60 * SECOND)).toBe("too_little");
    expect(behindReason("too_little", pace)).toBe("the origin sent less than 64 KiB in 60 s");
  });

  it("64 KiB a minute in small pieces keeps the pace for as long as it goes on", () => {
    // 1 KiB every 60/64 s: exactly 64 KiB in every window of 60 s.
    const every = (60 * SECOND) / 64;
    const window = new PaceWindow(pace, 0);
    for (let i = 0; i < 64 * 10; i++) {
      window.arrived(i * every, KiB);
      expect(window.behind(i * every)).toBeNull();
    }
    // The newest 64 KiB began 63 pieces ago: the origin falls behind 60 s after that.
    expect(window.deadline()).toBe((64 * 10 - 64) * every + 60 * SECOND);
  });

  it("a burst is good for 60 s after the newest 64 KiB of it began, then silence falls behind", () => {
    const window = windowWith([
      [1 * SECOND, 10 * KiB],
      [5 * SECOND, 1024 * KiB],
      [6 * SECOND, 1 * KiB],
    ]);
    // The newest 64 KiB are within the 1 MiB that arrived at 5 s.
    expect(window.deadline()).toBe(65 * SECOND);
    expect(window.behind(65 * SECOND - 1)).toBeNull();
    expect(window.behind(66 * SECOND)).toBe("nothing");
  });

  it("too little after a good start falls behind once the good part leaves the window", () => {
    const window = windowWith([
      [0, 100 * KiB],
      [30 * SECOND, 10 * KiB],
      [70 * SECOND, 10 * KiB],
    ]);
    expect(window.deadline()).toBe(60 * SECOND);
    expect(window.behind(70 * SECOND)).toBe("too_little");
  });

  it("the time the run spends on its own work (storing a part) is not the origin's", () => {
    const window = windowWith([[10 * SECOND, 64 * KiB]]);
    expect(window.deadline()).toBe(70 * SECOND);
    window.pause(25 * SECOND);
    expect(window.deadline()).toBe(95 * SECOND);
    expect(window.behind(94 * SECOND)).toBeNull();
  });
});

describe("the pace's window in development", () => {
  const resume = { load: () => ({ head: null, unresumable: false }), save: () => {} };

  it("is IMPORT_PACE_WINDOW_SECONDS there (the end-to-end tests end imports in seconds)", () => {
    const deps = importDeps({ ...env, ENVIRONMENT: "development", IMPORT_PACE_WINDOW_SECONDS: "5" } as Env, { resume });
    expect(deps.limits.pace).toEqual({ windowMs: 5 * SECOND, minBytes: 64 * KiB });
  });

  it("is refused anywhere else: production keeps 60 s", () => {
    const production = {
      ...env,
      ENVIRONMENT: "production",
      PUBLIC_BASE_URL: "https://api.example.com",
      ADMIN_TOKEN: "a".repeat(32),
      IMPORT_PACE_WINDOW_SECONDS: "5",
    } as Env;
    expect(() => importDeps(production, { resume })).toThrow(
      "IMPORT_PACE_WINDOW_SECONDS is for development only: elsewhere an import's pace is 60 s",
    );
    const { IMPORT_PACE_WINDOW_SECONDS: _, ...without } = production as Env & { IMPORT_PACE_WINDOW_SECONDS: string };
    expect(importDeps(without as Env, { resume }).limits.pace.windowMs).toBe(60 * SECOND);
  });
});
