// @ts-check
// Background work gives way to a viewer's on the same machine: while any interactive job runs (a
// probe, a viewer's segments, a frame), every background ffmpeg this encoder started is stopped
// (SIGSTOP), and continued (SIGCONT) once none runs. A niced background run still takes a share of
// the cores, and the Worker that serves its source and takes its segments (workerd, not niced)
// takes more: with every core on background runs, a viewer's segment at 90% of a 10-minute 720p
// source took 11.4-12.9 s on a 2-core machine (scripts/dev.mjs). Stopped, it takes nothing, and
// its source is not read meanwhile. A production encoder runs one job at a time (a Container per
// slot), so this never stops anything there.

import { readdir, readFile, readlink, realpath } from "node:fs/promises";

/** @typedef {import("node:child_process").ChildProcess} ChildProcess */

export class Yielding {
  /** @type {Set<ChildProcess>} */
  #children = new Set();
  #interactive = 0;

  /** Whether background work is stopped now. */
  get stopped() {
    return this.#interactive > 0;
  }

  /**
   * A background process to stop while interactive work runs (stopped at once if it runs now);
   * forgotten when it exits.
   * @param {ChildProcess} child
   */
  add(child) {
    this.#children.add(child);
    child.once("exit", () => this.#children.delete(child));
    if (this.stopped) signal(child, "SIGSTOP");
  }

  /** An interactive job starts: the first stops every background process. */
  hold() {
    this.#interactive += 1;
    if (this.#interactive === 1) for (const child of this.#children) signal(child, "SIGSTOP");
  }

  /** An interactive job is over: the last continues every background process. */
  release() {
    this.#interactive = Math.max(0, this.#interactive - 1);
    if (this.#interactive === 0) for (const child of this.#children) signal(child, "SIGCONT");
  }
}

/** @param {ChildProcess} child @param {NodeJS.Signals} name */
function signal(child, name) {
  if (child.exitCode === null && child.signalCode === null) child.kill(name);
}

/** The encoder's one: every background process it starts, every interactive job it runs. */
export const background = new Yielding();

/**
 * Ends what an earlier encoder of this process group left stopped: an encoder killed (SIGKILL, a
 * crash) while a viewer's job ran leaves its background ffmpeg stopped, and nothing would ever
 * continue it or end it (a stopped process does not act on SIGTERM). Such a process is stopped, in
 * this encoder's process group (`npm run dev`'s), runs one of `binaries`, and its parent is outside
 * the group (it went to init when its encoder died; a live encoder's children have their encoder
 * for parent). Read from /proc: elsewhere (no /proc) there is nothing to read, and nothing is done.
 * Resolves with the process ids it ended.
 * @param {string[]} binaries the paths of the binaries background work runs
 * @returns {Promise<number[]>}
 */
export async function endLeftovers(binaries) {
  const own = await statOf("self").catch(() => null);
  if (own === null) return [];
  const programs = new Set(await Promise.all(binaries.map((path) => realpath(path).catch(() => path))));
  /** @type {number[]} */
  const ended = [];
  for (const name of await readdir("/proc")) {
    const pid = Number(name);
    if (!Number.isInteger(pid) || pid === process.pid) continue;
    const stat = await statOf(name).catch(() => null);
    if (stat === null || stat.state !== "T" || stat.group !== own.group) continue;
    const parent = await statOf(String(stat.parent)).catch(() => null);
    if (parent !== null && parent.group === own.group) continue;
    const program = await readlink(`/proc/${name}/exe`).catch(() => null);
    if (program === null || !programs.has(program)) continue;
    try {
      process.kill(pid, "SIGKILL");
      ended.push(pid);
    } catch {
      // Gone meanwhile.
    }
  }
  return ended;
}

/**
 * A process's state, parent and process group, from /proc/<pid>/stat (its name, in parentheses,
 * may hold spaces: the fields are read after its last parenthesis).
 * @param {string} pid
 */
async function statOf(pid) {
  const stat = await readFile(`/proc/${pid}/stat`, "latin1");
  const [state = "", parent = "", group = ""] = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return { state, parent: Number(parent), group: Number(group) };
}
