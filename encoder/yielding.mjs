// @ts-check
// Background work gives way to a viewer's on the same machine: while any interactive job runs (a
// probe, a viewer's segments, a frame), every background ffmpeg this encoder started is stopped
// (SIGSTOP), and continued (SIGCONT) once none runs. A niced background run still takes a share of
// the cores, and the Worker that serves its source and takes its segments (workerd, not niced)
// takes more: with every core on background runs, a viewer's segment at 90% of a 10-minute 720p
// source took 11.4-12.9 s on a 2-core machine (scripts/dev.mjs). Stopped, it takes nothing, and
// its source is not read meanwhile. A production encoder runs one job at a time (a Container per
// slot), so this never stops anything there.

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
