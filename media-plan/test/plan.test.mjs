// @ts-check
import { describe, expect, it } from "vitest";
import {
  AUDIO_FRAME,
  AUDIO_RATE,
  audioPackets,
  bandwidth,
  codecs,
  firstAudioPacket,
  frameTime,
  h264Level,
  outputRate,
  planEncoding,
  runLength,
  segmentCount,
  segmentFrames,
  segmentSeconds,
  trackAudioPacket,
  Unplannable,
} from "../plan.mjs";
import { probed } from "./probes.mjs";

/** @type {import("../plan.mjs").PlanSettings} */
const settings = { enabledResolutions: ["360p", "720p", "1080p"], mp4: true, watermark: null };

describe("the output frame rate", () => {
  it("keeps standard rates, 29.97 and 23.976 as exact fractions", () => {
    expect(outputRate(30000 / 1001)).toEqual({ num: 30000, den: 1001 });
    expect(outputRate(29.971)).toEqual({ num: 30000, den: 1001 });
    expect(outputRate(23.976)).toEqual({ num: 24000, den: 1001 });
    expect(outputRate(25)).toEqual({ num: 25, den: 1 });
  });

  it("halves rates over 60, raises rates under 1, rounds the rest, and takes 25 when unknown", () => {
    expect(outputRate(120)).toEqual({ num: 60, den: 1 });
    expect(outputRate(119.88)).toEqual({ num: 60000, den: 1001 });
    expect(outputRate(0.2)).toEqual({ num: 1, den: 1 });
    expect(outputRate(12.3)).toEqual({ num: 12, den: 1 });
    expect(outputRate(null)).toEqual({ num: 25, den: 1 });
  });
});

describe("segments", () => {
  it("are whole numbers of frames of about 4 s: 120 frames at 29.97 (4.004 s), the last one short", () => {
    const plan = planEncoding(probed({ duration: 60.027, frameRate: 30000 / 1001 }), settings);
    expect(plan.framesPerSegment).toBe(120);
    expect(plan.frames).toBe(1800);
    expect(segmentCount(plan)).toBe(15);
    expect(segmentSeconds(plan, 0)).toBeCloseTo(4.004, 6);
    expect(segmentFrames(plan, 14)).toEqual({ first: 1680, count: 120 });
    const short = planEncoding(probed({ duration: 10.5, frameRate: 25 }), settings);
    expect(short.framesPerSegment).toBe(100);
    expect(segmentCount(short)).toBe(3);
    expect(segmentFrames(short, 2)).toEqual({ first: 200, count: 63 });
    expect(segmentSeconds(short, 2)).toBeCloseTo(2.52, 6);
  });

  it("add up to the video's duration, which is a whole number of frames", () => {
    for (const [duration, rate] of /** @type {const} */ ([
      [3, 25],
      [59.9, 30000 / 1001],
      [7201.3, 24000 / 1001],
      [1, 60],
      [0.04, 25],
    ])) {
      const plan = planEncoding(probed({ duration, frameRate: rate }), settings);
      let sum = 0;
      for (let i = 0; i < segmentCount(plan); i++) sum += segmentSeconds(plan, i);
      expect(sum).toBeCloseTo(plan.duration, 2);
      expect(Math.abs(plan.duration - duration)).toBeLessThan(2 * (plan.frameRate.den / plan.frameRate.num));
    }
  });

  it("give two frames at 1 fps one segment of 2 s", () => {
    const plan = planEncoding(probed({ duration: 2, frameRate: 1, audioStream: null }), settings);
    expect(plan.framesPerSegment).toBe(4);
    expect(plan.frames).toBe(2);
    expect(segmentCount(plan)).toBe(1);
    expect(plan.bFrames).toBe(false);
  });

  it("start where the durations listed before them end", () => {
    const plan = planEncoding(probed({ duration: 100, frameRate: 30000 / 1001 }), settings);
    let listed = 0;
    for (let i = 0; i < segmentCount(plan); i++) {
      expect(frameTime(plan, segmentFrames(plan, i).first)).toBeCloseTo(listed, 9);
      listed += segmentSeconds(plan, i);
    }
  });

  it("take the audio packets of the AAC grid from the B-frame delay before their start, tiling the video", () => {
    const plan = planEncoding(probed({ duration: 60.027, frameRate: 30000 / 1001 }), settings);
    expect(firstAudioPacket(plan, 0)).toBe(0);
    // Segment 1 starts at 4.004 s; its keyframe's decode time is two frames earlier.
    expect(firstAudioPacket(plan, 1)).toBe(Math.ceil(((4.004 - 2 * (1001 / 30000)) * AUDIO_RATE) / AUDIO_FRAME));
    expect(firstAudioPacket(plan, 1)).toBe(185);
    expect(firstAudioPacket(plan, segmentCount(plan))).toBe(audioPackets(plan));
    for (let i = 1; i < segmentCount(plan); i++) {
      const start = (firstAudioPacket(plan, i) * AUDIO_FRAME) / AUDIO_RATE;
      // Within a quarter second of the video (docs/encoding.md#long-videos-playable-in-seconds).
      expect(Math.abs(start - frameTime(plan, segmentFrames(plan, i).first))).toBeLessThan(0.25);
      expect(firstAudioPacket(plan, i)).toBeGreaterThan(firstAudioPacket(plan, i - 1));
    }
  });

  it("cut an added audio track at each segment's first frame, so its segments last the video's to within a packet", () => {
    const plan = planEncoding(probed({ duration: 60.027, frameRate: 30000 / 1001 }), settings);
    expect(trackAudioPacket(plan, 0)).toBe(0);
    // Segment 1 starts at 4.004 s: packet 187.6875 rounds up.
    expect(trackAudioPacket(plan, 1)).toBe(188);
    expect(trackAudioPacket(plan, segmentCount(plan))).toBe(audioPackets(plan));
    const packet = AUDIO_FRAME / AUDIO_RATE;
    for (let i = 0; i < segmentCount(plan); i++) {
      const seconds = (trackAudioPacket(plan, i + 1) - trackAudioPacket(plan, i)) * packet;
      expect(Math.abs(seconds - segmentSeconds(plan, i))).toBeLessThan(packet);
    }
  });

  it("use no B-frames under 20 fps, so audio cuts at the segment's own start", () => {
    const plan = planEncoding(probed({ duration: 30, frameRate: 12 }), settings);
    expect(plan.bFrames).toBe(false);
    expect(firstAudioPacket(plan, 1)).toBe(Math.ceil((4 * AUDIO_RATE) / AUDIO_FRAME));
  });

  it("run a segment of a 1080p ladder at once, more of cheaper ladders, at least one", () => {
    expect(runLength(planEncoding(probed(), settings))).toBe(1);
    expect(runLength(planEncoding(probed({ width: 1280, height: 720 }), settings))).toBe(3);
    expect(runLength(planEncoding(probed({ width: 640, height: 360 }), settings))).toBe(8);
    const uhd = planEncoding(probed({ width: 3840, height: 2160 }), {
      ...settings,
      enabledResolutions: ["360p", "720p", "1080p", "2160p"],
    });
    expect(runLength(uhd)).toBe(1);
  });
});

describe("the plan", () => {
  it("keeps the ladder, with each rendition's level, peak rate, BANDWIDTH and CODECS", () => {
    const plan = planEncoding(probed(), settings);
    expect(plan.renditions.map((r) => [r.resolution, r.width, r.height, r.level, r.codecs])).toEqual([
      ["360p", 640, 360, 30, "avc1.64001e,mp4a.40.2"],
      ["720p", 1280, 720, 31, "avc1.64001f,mp4a.40.2"],
      ["1080p", 1920, 1080, 40, "avc1.640028,mp4a.40.2"],
    ]);
    for (const r of plan.renditions) expect(r.bandwidth).toBe(bandwidth(r.maxrateKbps, 4, true));
    expect(codecs(42, false)).toBe("avc1.64002a");
  });

  it("picks H.264 levels by frame size, macroblock rate and the longest side", () => {
    expect(h264Level(1920, 1080, { num: 60, den: 1 }, 7500)).toBe(42);
    expect(h264Level(3840, 2160, { num: 30, den: 1 }, 16000)).toBe(51);
    // 16:1 at 240p: 240 macroblocks wide needs a frame size of at least 7,200.
    expect(h264Level(3840, 240, { num: 30, den: 1 }, 400)).toBe(40);
  });

  it("cuts a test video to its first 10 s", () => {
    const plan = planEncoding(probed({ duration: 20, frameRate: 25 }), settings, { maxDuration: 10 });
    expect(plan.duration).toBe(10);
    expect(plan.frames).toBe(250);
  });

  it("plans a clip as its span of the source: offset by its start, as long as the span, frame-accurate", () => {
    const plan = planEncoding(probed({ duration: 60, frameRate: 25 }), settings, { clip: { start: 12.5, end: 20.1 } });
    expect(plan.source.offset).toBe(12.5);
    expect(plan.frames).toBe(190);
    expect(plan.duration).toBe(7.6);
    // A test video's first 10 s are the clip's first 10 s.
    const test = planEncoding(probed({ duration: 60, frameRate: 25 }), settings, {
      clip: { start: 5, end: 45 },
      maxDuration: 10,
    });
    expect([test.source.offset, test.duration]).toEqual([5, 10]);
    // A span ending past the source's end (beyond a frame of slack) is not planned.
    expect(() => planEncoding(probed({ duration: 20 }), settings, { clip: { start: 0, end: 21 } })).toThrow(
      /the clip ends at 21 s/,
    );
    expect(planEncoding(probed({ duration: 60 }), settings).source.offset).toBe(0);
  });

  it("refuses sources over 12 hours, beyond 16:1 or 1:16, and pictures too large", () => {
    expect(() => planEncoding(probed({ duration: 12 * 3600 + 1 }), settings)).toThrow(Unplannable);
    expect(() => planEncoding(probed({ duration: 12 * 3600 }), settings)).not.toThrow();
    // SAR 100:1 on a 320×240 picture: 32000×240 displayed.
    expect(() => planEncoding(probed({ width: 32000, height: 240 }), settings)).toThrow(/16:1/);
    expect(() => planEncoding(probed({ width: 100, height: 1700 }), settings)).toThrow(/16:1/);
    expect(() => planEncoding(probed({ width: 3840, height: 240 }), settings)).not.toThrow();
    expect(() => planEncoding(probed({ duration: 0 }), settings)).toThrow(Unplannable);
  });

  it("puts the poster 1 s in, or a quarter into a clip shorter than 4 s", () => {
    expect(planEncoding(probed({ duration: 60 }), settings).posterTime).toBe(1);
    expect(planEncoding(probed({ duration: 2, frameRate: 25 }), settings).posterTime).toBe(0.5);
  });
});
