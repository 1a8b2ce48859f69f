// @ts-check
// The pictures a video has beside its renditions (docs/encoding.md#frames-and-the-storyboard): a still of any
// frame at any width, and the storyboard (one sprite of tiles, one tile per cue). Pure functions of
// the plan, used by both sides: the Worker names the frames and writes storyboard.vtt from them,
// the encoder makes the JPEGs.

import { topRendition } from "./plan.mjs";

/** The narrowest still `width` a viewer may ask for. */
export const MIN_STILL_WIDTH = 16;
/**
 * A storyboard tile's width at most (docs/encoding.md#frames-and-the-storyboard allows 320): 200
 * tiles stay a light sprite.
 */
export const STORYBOARD_TILE_WIDTH = 240;
/**
 * A storyboard tile's height at most: a tall picture's tiles are narrower, so that the sprite's
 * rows (20 at most) stay within what a JPEG can hold, 65,500 px a side (JPEG_MAX_SIDE), whatever
 * the aspect (a 1:16 tile is 20×320; a 1:16 tile 240 px wide would be 3,840 px high, a sprite of
 * 76,800).
 */
export const STORYBOARD_TILE_MAX_HEIGHT = 320;
/** The largest side of a JPEG image (its header allows 65,535; libjpeg refuses past 65,500). */
export const JPEG_MAX_SIDE = 65_500;
/** Tiles per row of the sprite. */
export const STORYBOARD_COLUMNS = 10;
/** Cues at most; a video up to MAX_CUES × MAX_CUE_SECONDS long has cues of at most MAX_CUE_SECONDS. */
export const STORYBOARD_MAX_CUES = 200;
export const STORYBOARD_MAX_CUE_SECONDS = 10;

/** @typedef {import("./plan.mjs").Plan} Plan */
/** @typedef {{ startMs: number, endMs: number, frame: number, x: number, y: number }} StoryboardCue */
/** @typedef {{ tileWidth: number, tileHeight: number, columns: number, rows: number, cues: StoryboardCue[] }} Storyboard */

/**
 * The output frame shown at `seconds` into the video: the nearest on its frame grid, within it.
 * @param {Plan} plan @param {number} seconds
 */
export function frameAt(plan, seconds) {
  const frame = Math.round((seconds * plan.frameRate.num) / plan.frameRate.den);
  return Math.min(plan.frames - 1, Math.max(0, frame));
}

/**
 * A still's size at `width` (default the highest rendition's own size): the height keeps the
 * highest rendition's aspect, rounded to an even number of pixels.
 * @param {Plan} plan @param {number | null | undefined} width
 */
export function stillSize(plan, width) {
  const top = topRendition(plan);
  if (width === null || width === undefined || width === top.width) return { width: top.width, height: top.height };
  return { width, height: Math.max(2, 2 * Math.round((width * top.height) / top.width / 2)) };
}

/**
 * The storyboard of a video: cues from 0 to its duration with no gap or overlap, at most
 * STORYBOARD_MAX_CUES, each at most STORYBOARD_MAX_CUE_SECONDS long while the video is short
 * enough for that (else equal spans), each shown by the frame at its middle (snapped down to the
 * frame grid, so within the cue), tiled left to right, top to bottom in one sprite.
 * @param {Plan} plan
 * @returns {Storyboard}
 */
export function storyboard(plan) {
  const durationMs = Math.round(plan.duration * 1000);
  const count =
    plan.duration <= STORYBOARD_MAX_CUES * STORYBOARD_MAX_CUE_SECONDS
      ? Math.max(1, Math.ceil(durationMs / (STORYBOARD_MAX_CUE_SECONDS * 1000)))
      : STORYBOARD_MAX_CUES;
  const top = topRendition(plan);
  // An even width whose height (keeping the aspect) is at most STORYBOARD_TILE_MAX_HEIGHT.
  const tallest = 2 * Math.floor((STORYBOARD_TILE_MAX_HEIGHT * top.width) / top.height / 2);
  const width = Math.max(MIN_STILL_WIDTH, Math.min(STORYBOARD_TILE_WIDTH, top.width, tallest));
  const { width: tileWidth, height: tileHeight } = stillSize(plan, width);
  const columns = Math.min(STORYBOARD_COLUMNS, count);
  /** @type {StoryboardCue[]} */
  const cues = [];
  for (let i = 0; i < count; i++) {
    const startMs = Math.round((i * durationMs) / count);
    const endMs = Math.round(((i + 1) * durationMs) / count);
    const middle = (startMs + endMs) / 2000;
    const frame = Math.min(
      plan.frames - 1,
      Math.max(0, Math.floor((middle * plan.frameRate.num) / plan.frameRate.den + 1e-9)),
    );
    cues.push({ startMs, endMs, frame, x: (i % columns) * tileWidth, y: Math.floor(i / columns) * tileHeight });
  }
  return { tileWidth, tileHeight, columns, rows: Math.ceil(count / columns), cues };
}
