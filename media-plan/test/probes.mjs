// @ts-check
// What a probe finds, for the tests of what is made from it (the plan, the pictures, the protocol).

/**
 * A 60 s 1920×1080 30 fps source with audio, as the probe reports it, with `extra` in its place.
 * @param {Partial<import("../plan.mjs").Probe>} [extra]
 * @returns {import("../plan.mjs").Probe}
 */
export function probed(extra = {}) {
  return {
    format: "mov",
    duration: 60,
    startTime: 0,
    width: 1920,
    height: 1080,
    frameRate: 30,
    videoStream: 0,
    audioStream: 1,
    interlaced: false,
    ...extra,
  };
}
