import { describe, expect, it } from "vitest";
import { planEncoding, segmentCount } from "../../../media-plan/plan.mjs";
import { probed } from "../../../media-plan/test/probes.mjs";
import { AUDIO_RUN_SEGMENTS, audioRuns, firstUnstored } from "../../../src/encoding/pipeline/coordinator-audio";

/** The coordinator's decisions about an added audio track's runs (coordinator-audio.ts), without the object. */
const plan = planEncoding(probed({ duration: 300 }), { enabledResolutions: ["360p"], mp4: false, watermark: null });

describe("an audio track's runs", () => {
  it("cover every segment once, in runs of at most AUDIO_RUN_SEGMENTS, as background units after the video's own", () => {
    const count = segmentCount(plan);
    expect(count).toBe(75);
    const runs = audioRuns(plan, "pt-BR", new Set(), new Set());
    expect(runs.map((run) => "from" in run && [run.from, run.to])).toEqual([
      [0, 15],
      [15, 30],
      [30, 45],
      [45, 60],
      [60, 75],
    ]);
    expect(runs[0]).toEqual({
      id: "audio-pt-BR-0",
      kind: "audio",
      priority: "background",
      language: "pt-BR",
      from: 0,
      to: AUDIO_RUN_SEGMENTS,
      rank: 2e12,
    });
  });

  it("leave out what is stored or covered by a unit already", () => {
    const covered = new Set([0, 1, 2, 3, 4]);
    const stored = new Set([5, 6, 20, 74]);
    const runs = audioRuns(plan, "fr", covered, stored);
    expect(runs.map((run) => "from" in run && [run.from, run.to])).toEqual([
      [7, 20],
      [21, 36],
      [36, 51],
      [51, 66],
      [66, 74],
    ]);
    expect(audioRuns(plan, "fr", new Set(), new Set(Array.from({ length: 75 }, (_, i) => i)))).toEqual([]);
  });

  it("start a failed run again from its first segment not stored", () => {
    expect(firstUnstored({ from: 15, to: 30 }, new Set([15, 16, 18]))).toBe(17);
    expect(firstUnstored({ from: 15, to: 17 }, new Set([15, 16]))).toBe(17);
    expect(firstUnstored({ from: 0, to: 15 }, new Set())).toBe(0);
  });
});
