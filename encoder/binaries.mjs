// @ts-check
// Which ffmpeg and ffprobe the encoder runs, and how a run of either is started and collected.
// In order: FFMPEG_PATH / FFPROBE_PATH; the program of that name on the PATH (Debian's, in the
// container); the binary inside the npm packages @ffmpeg-installer/ffmpeg and
// @ffprobe-installer/ffprobe (root devDependencies, for local development only).

import { spawn } from "node:child_process";
import { accessSync, constants } from "node:fs";
import { dirname, join } from "node:path";

/**
 * @typedef {{
 *   name: "ffmpeg" | "ffprobe",
 *   path: string,
 *   version: string,
 *   from: "env" | "PATH" | "npm",
 *   env: Record<string, string>,
 * }} Binary
 */
/** @typedef {{ ffmpeg: Binary, ffprobe: Binary }} Binaries */

const NPM_PACKAGES = /** @type {const} */ ({
  ffmpeg: "@ffmpeg-installer/ffmpeg",
  ffprobe: "@ffprobe-installer/ffprobe",
});
const OVERRIDES = /** @type {const} */ ({ ffmpeg: "FFMPEG_PATH", ffprobe: "FFPROBE_PATH" });

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

/** @param {"ffmpeg" | "ffprobe"} name @returns {Promise<string | null>} */
async function fromNpm(name) {
  try {
    // The packages are CommonJS and throw a string on a platform they do not cover.
    const module = /** @type {{ default: { path: string } }} */ (await import(NPM_PACKAGES[name]));
    return executable(module.default.path) ? module.default.path : null;
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
    const packaged = await fromNpm(name);
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
 * Both binaries with their versions; throws, naming what is missing, when either cannot be run.
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
    const run = await runBinary({ ...binary, version: "" }, ["-hide_banner", "-version"], { timeoutMs: 15_000 });
    const version = /^\S+ version (\S+)/.exec(run.stdout)?.[1];
    if (run.code !== 0 || !version) {
      throw new Error(`${binary.path} -version failed (${describeExit(run)}): ${run.stderr.slice(0, 300)}`);
    }
    return { ...binary, version };
  };
  return { ffmpeg: await withVersion("ffmpeg"), ffprobe: await withVersion("ffprobe") };
}

/** @param {Binaries} binaries */
export function describeBinaries({ ffmpeg, ffprobe }) {
  /** @param {Binary} b */
  const one = (b) => `${b.name} ${b.version} at ${b.path} (from ${b.from})`;
  return `${one(ffmpeg)}; ${one(ffprobe)}`;
}

/**
 * @typedef {{ code: number | null, signal: NodeJS.Signals | null, stdout: string, stderr: string, pid: number | undefined }} Run
 */

/** @param {{ code: number | null, signal: NodeJS.Signals | null }} run */
export function describeExit(run) {
  return run.signal ? `killed by ${run.signal}` : `exit code ${run.code}`;
}

/**
 * Runs `binary` to completion, keeping the end of its output (the last `keep` characters of
 * each stream). A spawn failure rejects; an exit of any kind resolves.
 * @param {Binary} binary
 * @param {string[]} args
 * @param {{ signal?: AbortSignal, timeoutMs?: number, keep?: number, onStdout?: (chunk: string) => void, onSpawn?: (pid: number) => void }} [options]
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
      if (child.pid !== undefined) options.onSpawn?.(child.pid);
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
