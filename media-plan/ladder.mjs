// @ts-check
// Which renditions a source gets (docs/encoding.md#renditions-and-the-watermark). Pure: sizes in, sizes out.

export { RESOLUTIONS } from "./settings.mjs";

/** @typedef {import("./settings.mjs").Resolution} Resolution */
/** @typedef {import("./settings.mjs").Position} Position */
/** @typedef {{ resolution: string, width: number, height: number }} Rendition */

/** The nearest even integer, at least 2 (H.264 in 4:2:0 needs even dimensions). @param {number} value */
function even(value) {
  return Math.max(2, 2 * Math.round(value / 2));
}

/** The largest even integer not above `value`, at least 2: used where rounding up would upscale. @param {number} value */
function evenAtMost(value) {
  return Math.max(2, 2 * Math.floor(value / 2));
}

/**
 * The renditions of a source whose display size (rotation and pixel aspect applied) is
 * `width`×`height`: every enabled resolution whose number is at most the shorter side, lowest
 * first; when none is, one rendition at the source's own size labelled by its shorter side. The
 * label's number is the rendition's shorter side; the longer side keeps the aspect ratio, rounded
 * to an even number (the source's own size is rounded down instead, so it is never upscaled).
 *
 * @param {{ width: number, height: number }} source
 * @param {readonly string[]} enabled
 * @returns {Rendition[]}
 */
export function ladder(source, enabled) {
  const { width, height } = source;
  if (!(Number.isInteger(width) && Number.isInteger(height) && width > 0 && height > 0)) {
    throw new RangeError(`source size must be positive integers, got ${width}x${height}`);
  }
  const portrait = height > width;
  const shorter = Math.min(width, height);
  const longer = Math.max(width, height);
  /** @param {number} short @param {number} long */
  const oriented = (short, long) => (portrait ? { width: short, height: long } : { width: long, height: short });

  const fitting = [...new Set(enabled)]
    .map((label) => ({ label, short: labelNumber(label) }))
    .filter(({ short }) => short <= shorter)
    .sort((a, b) => a.short - b.short);
  if (fitting.length > 0) {
    return fitting.map(({ label, short }) => ({
      resolution: label,
      ...oriented(short, Math.min(even((short * longer) / shorter), evenAtMost(longer))),
    }));
  }
  const short = evenAtMost(shorter);
  return [
    {
      resolution: `${shorter}p`,
      ...oriented(short, Math.min(even((short * longer) / shorter), evenAtMost(longer))),
    },
  ];
}

/** @param {string} label a resolution such as "720p" */
export function labelNumber(label) {
  const match = /^([1-9][0-9]{0,4})p$/.exec(label);
  if (!match?.[1]) throw new RangeError(`not a resolution label: ${label}`);
  return Number(match[1]);
}
