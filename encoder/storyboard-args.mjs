// @ts-check
// The storyboard's ffmpeg runs: a tile per cue, the still of its frame at the tile size (the stills'
// own arguments, in ffmpeg-args.mjs), each a job of its own, then the sprite that tiles them
// (media-plan/pictures.mjs gives the layout).

import { join } from "node:path";
import { storyboard } from "../media-plan/pictures.mjs";
import { frameTime } from "../media-plan/plan.mjs";
import { RUN_FLAGS, STILL_OUTPUT, stillArgs } from "./ffmpeg-args.mjs";

/** @typedef {import("./ffmpeg-args.mjs").Common} Common */
/** @typedef {import("../media-plan/plan.mjs").Plan} Plan */

/**
 * The ffmpeg arguments that tile the storyboard's stills (`pattern`, numbered from 0 in cue order,
 * all of the tile size) into its sprite: `columns` across, as many rows as they fill.
 * @param {{ pattern: string, columns: number, rows: number, file: string }} sprite
 * @returns {string[]}
 */
export function spriteArgs(sprite) {
  return [
    ...RUN_FLAGS,
    "-protocol_whitelist",
    "file",
    "-f",
    "image2",
    "-framerate",
    "1",
    "-start_number",
    "0",
    "-i",
    sprite.pattern,
    "-vf",
    `tile=${sprite.columns}x${sprite.rows},format=yuvj420p`,
    "-frames:v",
    "1",
    "-q:v",
    "4",
    ...STILL_OUTPUT,
    sprite.file,
  ];
}

/**
 * The ffmpeg arguments of storyboard tile `cue` (pictures.mjs `storyboard`): the still of the cue's
 * frame at the tile size, written to `file`. The same arguments as the frame at that time and
 * width (`stillArgs`), so a tile is the frame a viewer asking for it gets.
 * @param {Common} common @param {number} cue @param {string} file
 */
export function tileArgs(common, cue, file) {
  const board = storyboard(common.plan);
  const frame = /** @type {{ frame: number }} */ (board.cues[cue]).frame;
  return stillArgs({ ...common, time: frameTime(common.plan, frame), width: board.tileWidth, file });
}

/**
 * The storyboard's sprite from its tiles, `dir/tile_NNN.jpg` in cue order: the sprite's arguments
 * and where it is written (`dir/storyboard.jpg`).
 * @param {Plan} plan @param {string} dir
 */
export function storyboardSprite(plan, dir) {
  const board = storyboard(plan);
  const file = join(dir, "storyboard.jpg");
  const tile = (/** @type {number} */ cue) => join(dir, `tile_${String(cue).padStart(3, "0")}.jpg`);
  const args = spriteArgs({ pattern: join(dir, "tile_%03d.jpg"), columns: board.columns, rows: board.rows, file });
  return { args, file, tile, tiles: board.cues.length };
}
