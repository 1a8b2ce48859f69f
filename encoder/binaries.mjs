// @ts-check
// Which ffmpeg and ffprobe the encoder runs, and how a run of either is started and collected.
// In order: FFMPEG_PATH / FFPROBE_PATH; the program of that name on the PATH (Debian's, in the
// container); the binaries inside the npm packages @ffmpeg-installer/linux-x64 and
// @ffprobe-installer/linux-x64 (root optional dependencies, for local development only, pinned to
// two versions that hold one and the same build). ffmpeg and ffprobe must be one build: a file
// that one version takes for a video and another for a playlist would otherwise be validated by
// one reading and encoded by the other.

import { spawn } from "node:child_process";
import { accessSync, constants } from "node:fs";
import { createRequire } from "node:module";
import { setPriority } from "node:os";
import { dirname, join } from "node:path";
import { background } from "./yielding.mjs";

/**
 * @typedef {{
 *   name: "ffmpeg" | "ffprobe",
 *   path: string,
 *   version: string,
 *   from: "env" | "PATH" | "npm",
 *   env: Record<string, string>,
 * }} Binary
 */
/** @typedef {import("./ffmpeg-args.mjs").Features} Features */
/** @typedef {{ ffmpeg: Binary, ffprobe: Binary, features: Features }} Binaries */

const NPM_PACKAGES = /** @type {const} */ ({
  ffmpeg: "@ffmpeg-installer/linux-x64",
  ffprobe: "@ffprobe-installer/linux-x64",
});
const OVERRIDES = /** @type {const} */ ({ ffmpeg: "FFMPEG_PATH", ffprobe: "FFPROBE_PATH" });
/**
 * The nice value of background encodes (interactive ones keep the default, 0): the lowest, so a
 * viewer's on-demand segment and a probe get the cores. Linux weighs each thread: a background
 * run of three renditions has about ten threads against a viewer's job's four or five, so at 10
 * the background kept about a fifth of the CPU (10 × 110 against 5 × 1024), at 19 about 3%
 * (10 × 15). At 10, a viewer's segment at 90% of a 10-minute 720p source took 10.5 s in CI
 * (docs/encoding.md#long-videos-playable-in-seconds: 10 s), 4.1 s on the same machine when the
 * background had just started.
 */
const BACKGROUND_PRIORITY = 19;

/**
 * A process of background work: niced, and stopped while a viewer's work runs (yielding.mjs).
 * @param {import("node:child_process").ChildProcess} child a spawned process
 */
export function runsInBackground(child) {
  if (child.pid !== undefined) setPriority(child.pid, BACKGROUND_PRIORITY);
  background.add(child);
}

/** @param {string} file */
function executable(file) {
  try {
    accessSync(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/**
 * @param {string} name
 * @param {string | undefined} searchPath
 */
export function onPath(name, searchPath) {
  for (const dir of (searchPath ?? "").split(":")) {
    if (dir && executable(join(dir, name))) return join(dir, name);
  }
  return null;
}

/** @param {"ffmpeg" | "ffprobe"} name @returns {string | null} */
function fromNpm(name) {
  try {
    // The package holds the binary beside its package.json; npm installs it only on linux-x64.
    const manifest = createRequire(import.meta.url).resolve(`${NPM_PACKAGES[name]}/package.json`);
    const file = join(dirname(manifest), name);
    return executable(file) ? file : null;
  } catch {
    return null;
  }
}

/**
 * Where each binary is, or null for one that cannot be found anywhere.
 * @param {NodeJS.ProcessEnv} env
 * @returns {Promise<{ ffmpeg: Omit<Binary, "version"> | null, ffprobe: Omit<Binary, "version"> | null }>}
 */
export async function locateBinaries(env = process.env) {
  /** @param {"ffmpeg" | "ffprobe"} name @returns {Promise<Omit<Binary, "version"> | null>} */
  const locate = async (name) => {
    const override = env[OVERRIDES[name]];
    if (override) return { name, path: override, from: "env", env: {} };
    const found = onPath(name, env.PATH);
    if (found) return { name, path: found, from: "PATH", env: {} };
    const packaged = fromNpm(name);
    // These static builds link glibc statically; its iconv would load the system's gconv modules,
    // built for another glibc, and crash (ffprobe dies on any MPEG-TS: its service names are
    // decoded with iconv). Pointing GCONV_PATH at a folder without modules makes iconv fail
    // cleanly instead.
    if (packaged) return { name, path: packaged, from: "npm", env: { GCONV_PATH: dirname(packaged) } };
    return null;
  };
  return { ffmpeg: await locate("ffmpeg"), ffprobe: await locate("ffprobe") };
}

/**
 * Both binaries with their versions and what the ffmpeg can do; throws, naming what is missing,
 * when either cannot be run or when the two are not one build.
 * @param {NodeJS.ProcessEnv} env
 * @returns {Promise<Binaries>}
 */
export async function resolveBinaries(env = process.env) {
  const located = await locateBinaries(env);
  /** @param {"ffmpeg" | "ffprobe"} name @returns {Promise<Binary>} */
  const withVersion = async (name) => {
    const binary = located[name];
    if (!binary) {
      throw new Error(
        `no ${name}: set ${OVERRIDES[name]}, put ${name} on the PATH (apt-get install ffmpeg) or npm install ${NPM_PACKAGES[name]}`,
      );
    }
    const run = await runBinary(binary, ["-hide_banner", "-version"], { timeoutMs: 15_000 });
    const version = /^\S+ version (\S+)/.exec(run.stdout)?.[1];
    if (run.code !== 0 || !version) {
      throw new Error(`${binary.path} -version failed (${describeExit(run)}): ${run.stderr.slice(0, 300)}`);
    }
    return { ...binary, version };
  };
  const ffmpeg = await withVersion("ffmpeg");
  const ffprobe = await withVersion("ffprobe");
  if (ffmpeg.version !== ffprobe.version) {
    throw new Error(
      `ffmpeg ${ffmpeg.version} (${ffmpeg.path}) and ffprobe ${ffprobe.version} (${ffprobe.path}) are not one build: use a matching pair`,
    );
  }
  return { ffmpeg, ffprobe, features: await featuresOf(ffmpeg) };
}

/**
 * What this ffmpeg can do beyond the basics (ffmpeg-args.mjs `Features`), asked of it.
 * @param {Binary} ffmpeg
 * @returns {Promise<Features>}
 */
export async function featuresOf(ffmpeg) {
  const filters = await runBinary(ffmpeg, ["-hide_banner", "-filters"], { timeoutMs: 15_000 });
  const noise = await runBinary(ffmpeg, ["-hide_banner", "-h", "bsf=noise"], { timeoutMs: 15_000 });
  return {
    holdLastPicture: /^\s*\S+\s+tpad\s/m.test(filters.stdout),
    dropPriming: /^\s*-drop\s+<string>/m.test(noise.stdout),
  };
}

/** @param {Binaries} binaries */
export function describeBinaries({ ffmpeg, ffprobe, features }) {
  /** @param {Binary} b */
  const one = (b) => `${b.name} ${b.version} at ${b.path} (from ${b.from})`;
  const missing = [
    ...(features.dropPriming ? [] : ["AAC priming drop"]),
    ...(features.holdLastPicture ? [] : ["tpad"]),
  ];
  return `${one(ffmpeg)}; ${one(ffprobe)}${missing.length ? `; without ${missing.join(", ")}` : ""}`;
}

/**
 * @typedef {{ code: number | null, signal: NodeJS.Signals | null, stdout: string, stderr: string, pid: number | undefined }} Run
 */

/** @param {{ code: number | null, signal: NodeJS.Signals | null }} run */
export function describeExit(run) {
  return run.signal ? `killed by ${run.signal}` : `exit code ${run.code}`;
}

/**
 * Runs `binary` (ffmpeg, ffprobe, or any other program the encoder runs) to completion, keeping the
 * end of its output (the last `keep` characters of each stream). A spawn failure rejects; an exit
 * of any kind resolves.
 * @param {Pick<Binary, "path" | "env">} binary
 * @param {string[]} args
 * @param {{ signal?: AbortSignal, timeoutMs?: number, keep?: number, onStdout?: (chunk: string) => void, onSpawn?: (pid: number) => void, nice?: boolean }} [options]
 * @returns {Promise<Run>}
 */
export function runBinary(binary, args, options = {}) {
  const keep = options.keep ?? 1_000_000;
  return new Promise((resolve, reject) => {
    const child = spawn(binary.path, args, {
      env: { ...process.env, ...binary.env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    let settled = false;
    const kill = () => child.kill("SIGKILL");
    const timer = options.timeoutMs ? setTimeout(kill, options.timeoutMs) : null;
    options.signal?.addEventListener("abort", kill, { once: true });
    if (options.signal?.aborted) kill();
    child.stdout.setEncoding("utf8");
    child.stderr.setEncoding("utf8");
    child.stdout.on("data", (chunk) => {
      stdout = (stdout + chunk).slice(-keep);
      options.onStdout?.(chunk);
    });
    child.stderr.on("data", (chunk) => {
      stderr = (stderr + chunk).slice(-keep);
    });
    const finish = () => {
      if (timer) clearTimeout(timer);
      options.signal?.removeEventListener("abort", kill);
    };
    child.on("spawn", () => {
      if (child.pid === undefined) return;
      if (options.nice) runsInBackground(child);
      options.onSpawn?.(child.pid);
    });
    child.on("error", (error) => {
      finish();
      if (!settled) {
        settled = true;
        reject(error);
      }
    });
    child.on("close", (code, signal) => {
      finish();
      if (!settled) {
        settled = true;
        resolve({ code, signal, stdout, stderr, pid: child.pid });
      }
    });
  });
}
