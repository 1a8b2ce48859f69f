// @ts-check
import { describe, expect, it } from "vitest";
import { indexBound, nextPart, partSize } from "../files.mjs";
import { planEncoding, segmentCount } from "../plan.mjs";
import { MAX_PARTS, MAX_REQUEST_BYTES, MIN_PART_BYTES } from "../protocol.mjs";
import { probed } from "./probes.mjs";

const settings = { enabledResolutions: ["360p", "720p", "1080p"], mp4: true, watermark: null };

describe("a file's parts", () => {
  it("are small enough to be a short job, large enough for the longest video's file at its peak", () => {
    const short = planEncoding(probed({ duration: 60 }), settings);
    expect(partSize(short, "mp4")).toBe(16 * 1024 * 1024);
    expect(partSize(short, "m4a")).toBe(MIN_PART_BYTES);
    // Twelve hours of 1080p at its peak rate: within R2's parts, no request over the limit.
    const longest = planEncoding(probed({ duration: 12 * 3600 }), settings);
    for (const file of /** @type {const} */ (["mp4", "m4a"])) {
      const size = partSize(longest, file);
      expect(size).toBeLessThanOrEqual(MAX_REQUEST_BYTES);
      const peak = file === "mp4" ? (1.1 * 8388053 * 4.004) / 8 : (1.1 * 128_000 * 4.004) / 8;
      expect((peak * segmentCount(longest)) / size).toBeLessThan(MAX_PARTS);
      // The first part holds the index and a segment at its peak.
      expect(size - indexBound(longest, file)).toBeGreaterThan(peak);
    }
  });

  it("are made the first measuring, the others in turn after it, the first written last", () => {
    const count = 15;
    const part = (
      /** @type {number} */ n,
      /** @type {number} */ from,
      /** @type {number} */ to,
      /** @type {string | null} */ etag = `e${n}`,
    ) => ({
      part: n,
      from,
      to,
      fragments: [
        { size: 100, times: [0, 0] },
        { size: 100, times: [1, 1] },
      ],
      origin: 1020000,
      etag,
    });
    expect(nextPart(count, [])).toEqual({ part: 1, from: 0, to: null, sequence: 1, origin: null });
    const head = part(1, 0, 4, null);
    expect(nextPart(count, [head])).toEqual({ part: 2, from: 4, to: null, sequence: 3, origin: 1020000 });
    expect(nextPart(count, [head, part(2, 4, 9)])).toEqual({
      part: 3,
      from: 9,
      to: null,
      sequence: 5,
      origin: 1020000,
    });
    expect(nextPart(count, [part(3, 9, count), head, part(2, 4, 9)])).toEqual({
      part: 1,
      from: 0,
      to: 4,
      sequence: 1,
      origin: null,
    });
    expect(nextPart(count, [part(1, 0, 4), part(2, 4, 9), part(3, 9, count)])).toBe("complete");
    // A first part that held the whole file was written at once.
    expect(nextPart(count, [part(1, 0, count)])).toBe("complete");
  });
});
