// @ts-check
// The storyboard's ffmpeg runs: a still per cue at the tile size (the stills' own arguments, in
// ffmpeg-args.mjs), then the sprite that tiles them (media-plan/pictures.mjs gives the layout).

import { join } from "node:path";
import { storyboard, storyboardTimes } from "../media-plan/pictures.mjs";
import { RUN_FLAGS, STILL_OUTPUT, stillArgs } from "./ffmpeg-args.mjs";

/** @typedef {import("./ffmpeg-args.mjs").Common} Common */

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
 * The storyboard job's ffmpeg runs, in order: a still per cue at the tile size
 * (`dir/tile_NNN.jpg`), then the sprite that tiles them into `file` (`dir/storyboard.jpg`).
 * @param {Common} common @param {string} dir
 * @returns {{ stills: string[][], sprite: string[], file: string }}
 */
export function storyboardArgs(common, dir) {
  const board = storyboard(common.plan);
  const stills = storyboardTimes(common.plan).map((time, i) =>
    stillArgs({ ...common, time, width: board.tileWidth, file: join(dir, `tile_${String(i).padStart(3, "0")}.jpg`) }),
  );
  const file = join(dir, "storyboard.jpg");
  const sprite = spriteArgs({ pattern: join(dir, "tile_%03d.jpg"), columns: board.columns, rows: board.rows, file });
  return { stills, sprite, file };
}
