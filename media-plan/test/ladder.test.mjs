// @ts-check
import { describe, expect, it } from "vitest";
import { labelNumber, ladder, RESOLUTIONS } from "../ladder.mjs";

describe("ladder", () => {
  it("gives every enabled resolution up to the shorter side, lowest first, of a 16:9 source", () => {
    expect(ladder({ width: 1920, height: 1080 }, ["1080p", "360p", "720p", "2160p"])).toEqual([
      { resolution: "360p", width: 640, height: 360 },
      { resolution: "720p", width: 1280, height: 720 },
      { resolution: "1080p", width: 1920, height: 1080 },
    ]);
  });

  it("uses only the enabled set", () => {
    expect(ladder({ width: 1920, height: 1080 }, ["480p"])).toEqual([{ resolution: "480p", width: 854, height: 480 }]);
  });

  it("labels a portrait rendition by its shorter side, the width", () => {
    expect(ladder({ width: 1080, height: 1920 }, ["360p", "720p", "1080p"])).toEqual([
      { resolution: "360p", width: 360, height: 640 },
      { resolution: "720p", width: 720, height: 1280 },
      { resolution: "1080p", width: 1080, height: 1920 },
    ]);
  });

  it("rounds the longer side to an even number", () => {
    // 240 × 16/9 = 426.67 → 426; 480 × 4/3 = 640; 240 × 2.39 = 573.6 → 574
    expect(ladder({ width: 640, height: 360 }, ["240p"])).toEqual([{ resolution: "240p", width: 426, height: 240 }]);
    expect(ladder({ width: 640, height: 480 }, ["480p"])).toEqual([{ resolution: "480p", width: 640, height: 480 }]);
    expect(ladder({ width: 1912, height: 800 }, ["240p"])).toEqual([{ resolution: "240p", width: 574, height: 240 }]);
  });

  it("never upscales: a resolution above the shorter side is left out", () => {
    expect(ladder({ width: 1280, height: 720 }, ["720p", "1080p", "2160p"])).toEqual([
      { resolution: "720p", width: 1280, height: 720 },
    ]);
    // 720p of a 1279×720 source would need 1280 columns; it keeps the source's even width instead.
    expect(ladder({ width: 1279, height: 720 }, ["720p"])).toEqual([{ resolution: "720p", width: 1278, height: 720 }]);
  });

  it("gives one rendition at the source's own size when no enabled resolution fits", () => {
    expect(ladder({ width: 320, height: 180 }, ["360p", "720p"])).toEqual([
      { resolution: "180p", width: 320, height: 180 },
    ]);
    expect(ladder({ width: 180, height: 320 }, ["1080p"])).toEqual([{ resolution: "180p", width: 180, height: 320 }]);
  });

  it("rounds an odd own size down to even numbers, keeping the source's label", () => {
    expect(ladder({ width: 855, height: 481 }, ["720p"])).toEqual([{ resolution: "481p", width: 854, height: 480 }]);
    expect(ladder({ width: 201, height: 113 }, ["240p"])).toEqual([{ resolution: "113p", width: 200, height: 112 }]);
    expect(ladder({ width: 481, height: 481 }, ["1080p"])).toEqual([{ resolution: "481p", width: 480, height: 480 }]);
  });

  it("takes a resolution equal to the shorter side, even an odd one's neighbour", () => {
    expect(ladder({ width: 855, height: 481 }, ["480p", "720p"])).toEqual([
      { resolution: "480p", width: 854, height: 480 },
    ]);
  });

  it("handles a square source", () => {
    expect(ladder({ width: 1080, height: 1080 }, ["720p", "1080p"])).toEqual([
      { resolution: "720p", width: 720, height: 720 },
      { resolution: "1080p", width: 1080, height: 1080 },
    ]);
  });

  it("uses all seven resolutions for an 8K source", () => {
    const renditions = ladder({ width: 7680, height: 4320 }, [...RESOLUTIONS]);
    expect(renditions.map((r) => `${r.resolution}=${r.width}x${r.height}`)).toEqual([
      "240p=426x240",
      "360p=640x360",
      "480p=854x480",
      "720p=1280x720",
      "1080p=1920x1080",
      "1440p=2560x1440",
      "2160p=3840x2160",
    ]);
  });

  it("ignores a repeated resolution and refuses a size that is not positive", () => {
    expect(ladder({ width: 640, height: 360 }, ["360p", "360p"])).toHaveLength(1);
    expect(() => ladder({ width: 0, height: 360 }, ["360p"])).toThrow(RangeError);
    expect(() => ladder({ width: 640.5, height: 360 }, ["360p"])).toThrow(RangeError);
  });

  it("reads labels", () => {
    expect(labelNumber("1080p")).toBe(1080);
    expect(() => labelNumber("1080")).toThrow(RangeError);
    expect(() => labelNumber("0p")).toThrow(RangeError);
  });
});
