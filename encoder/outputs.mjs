// @ts-check
// After ffmpeg succeeds: variant folders renamed to their labels, every output checked (each
// variant's first segment is H.264 at its size, with audio exactly when the source has it; the
// MP4 and poster are there), the master playlist written, and the upload list made.

import { readdir, readFile, rename, stat, writeFile } from "node:fs/promises";
import { join, relative } from "node:path";
import { runBinary } from "./binaries.mjs";
import { numberedVariantDir } from "./ffmpeg-args.mjs";
import { bandwidth, codecs, masterPlaylist, parseMediaPlaylist } from "./playlist.mjs";

/** @typedef {import("./binaries.mjs").Binary} Binary */
/** @typedef {import("./ladder.mjs").Rendition} Rendition */

export const MASTER = "master.m3u8";
export const MP4 = "video.mp4";
export const POSTER = "poster.jpg";
export const VARIANT_PLAYLIST = "index.m3u8";

/** An output is missing or not what was asked for. */
export class OutputInvalid extends Error {
  /** @param {string} message */
  constructor(message) {
    super(message);
    this.name = "OutputInvalid";
  }
}

/**
 * @param {Binary} ffprobe
 * @param {string} file
 * @param {AbortSignal} [signal]
 * @returns {Promise<Record<string, unknown>[]>}
 */
async function streamsOf(ffprobe, file, signal) {
  const run = await runBinary(
    ffprobe,
    [
      "-v",
      "error",
      "-print_format",
      "json",
      "-show_entries",
      "stream=codec_type,codec_name,profile,level,width,height",
      file,
    ],
    { signal, timeoutMs: 60_000 },
  );
  if (run.code !== 0) throw new OutputInvalid(`ffprobe cannot read ${file}: ${run.stderr.slice(0, 200)}`);
  const parsed = /** @type {{ streams?: Record<string, unknown>[] }} */ (JSON.parse(run.stdout));
  return parsed.streams ?? [];
}

/** @param {string} file */
async function nonEmpty(file) {
  const info = await stat(file).catch(() => null);
  if (!info?.isFile() || info.size === 0) throw new OutputInvalid(`${file} is missing or empty`);
  return info.size;
}

/**
 * @param {{
 *   outDir: string,
 *   renditions: Rendition[],
 *   hasAudio: boolean,
 *   mp4: boolean,
 *   ffprobe: Binary,
 *   signal?: AbortSignal,
 * }} set
 * @returns {Promise<string[]>} every file to upload, relative to outDir: segments, then variant
 *   playlists, then the master playlist, the MP4 and the poster
 */
export async function finishOutputs(set) {
  const { outDir, renditions, hasAudio, ffprobe, signal } = set;
  const segments = [];
  const playlists = [];
  const variants = [];
  for (const [i, rendition] of renditions.entries()) {
    await rename(join(outDir, numberedVariantDir(i)), join(outDir, rendition.resolution));
    const dir = join(outDir, rendition.resolution);
    const list = parseMediaPlaylist(await readFile(join(dir, VARIANT_PLAYLIST), "utf8"));
    const sized = [];
    for (const segment of list) {
      sized.push({ duration: segment.duration, bytes: await nonEmpty(join(dir, segment.uri)) });
      segments.push(`${rendition.resolution}/${segment.uri}`);
    }
    playlists.push(`${rendition.resolution}/${VARIANT_PLAYLIST}`);

    const streams = await streamsOf(ffprobe, join(dir, /** @type {{ uri: string }} */ (list[0]).uri), signal);
    const video = streams.find((s) => s.codec_type === "video");
    const audio = streams.filter((s) => s.codec_type === "audio");
    if (video?.codec_name !== "h264" || video.width !== rendition.width || video.height !== rendition.height) {
      throw new OutputInvalid(`${rendition.resolution}: expected H.264 ${rendition.width}x${rendition.height}`);
    }
    if (audio.length !== (hasAudio ? 1 : 0)) {
      throw new OutputInvalid(`${rendition.resolution}: ${audio.length} audio streams`);
    }
    const rates = bandwidth(sized);
    variants.push({
      rendition,
      uri: `${rendition.resolution}/${VARIANT_PLAYLIST}`,
      bandwidth: rates.peak,
      averageBandwidth: rates.average,
      codecs: codecs({ profile: String(video.profile), level: Number(video.level) }, hasAudio),
    });
  }
  await writeFile(join(outDir, MASTER), masterPlaylist(variants));

  const top = /** @type {Rendition} */ (renditions[renditions.length - 1]);
  if (set.mp4) await nonEmpty(join(outDir, MP4));
  await nonEmpty(join(outDir, POSTER));
  const [poster] = await streamsOf(ffprobe, join(outDir, POSTER), signal);
  if (poster?.codec_name !== "mjpeg" || poster.width !== top.width || poster.height !== top.height) {
    throw new OutputInvalid(`poster: expected a JPEG ${top.width}x${top.height}`);
  }

  const files = [...segments, ...playlists, MASTER, ...(set.mp4 ? [MP4] : []), POSTER];
  const present = await listFiles(outDir);
  const stray = present.filter((file) => !files.includes(file));
  if (stray.length > 0) throw new OutputInvalid(`unexpected outputs: ${stray.slice(0, 5).join(", ")}`);
  return files;
}

/**
 * Every file under `dir`, as paths relative to it with `/` separators.
 * @param {string} dir
 * @returns {Promise<string[]>}
 */
export async function listFiles(dir) {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  return entries
    .filter((entry) => entry.isFile())
    .map((entry) => relative(dir, join(entry.parentPath, entry.name)).split("\\").join("/"))
    .sort();
}
