// @ts-check
// Remuxing a video's stored segments without encoding anything again (the MP4 and the M4A jobs): a
// rendition's segments read back from the Worker one after the other, fed to ffmpeg on standard
// input as one MPEG-TS stream, and what ffmpeg writes to standard output given on as it comes.

import { spawn } from "node:child_process";
import { once } from "node:events";
import { segmentCount } from "../media-plan/plan.mjs";

/** @typedef {import("../media-plan/protocol.mjs").Mp4Job | import("../media-plan/protocol.mjs").M4aJob} RemuxJob */
/** @typedef {import("./callback.mjs").CallbackClient} CallbackClient */
/** @typedef {import("./binaries.mjs").Binaries} Binaries */

const TS_PACKET = 188;

/**
 * Segments made by different runs each count their MPEG-TS continuity counters from zero, which
 * a demuxer reading them as one stream takes for lost packets. This renumbers every packet that
 * carries a payload, per PID, so the concatenation is one continuous stream.
 */
export function continuityFixer() {
  /** @type {Map<number, number>} */
  const counters = new Map();
  /** @type {Buffer} */
  let pending = Buffer.alloc(0);
  /** @param {Buffer} chunk @returns {Buffer} whole packets, renumbered */
  return (chunk) => {
    const data = pending.length > 0 ? Buffer.concat([pending, chunk]) : chunk;
    const whole = data.length - (data.length % TS_PACKET);
    const out = Buffer.from(data.subarray(0, whole));
    pending = Buffer.from(data.subarray(whole));
    for (let at = 0; at < out.length; at += TS_PACKET) {
      if (out[at] !== 0x47) throw new Error("not an MPEG-TS packet boundary");
      const b1 = /** @type {number} */ (out[at + 1]);
      const b3 = /** @type {number} */ (out[at + 3]);
      const pid = ((b1 & 0x1f) << 8) | /** @type {number} */ (out[at + 2]);
      if (pid === 0x1fff || (b3 & 0x10) === 0) continue;
      const next = ((counters.get(pid) ?? (b3 & 0x0f) - 1) + 1) & 0x0f;
      counters.set(pid, next);
      out[at + 3] = (b3 & 0xf0) | next;
    }
    return out;
  };
}

/** How long a remux may neither take a segment in nor give a byte out before it is taken for stuck. */
const STALL_MS = 60_000;

/**
 * Remuxes every segment of `rendition`, read one after the other, with ffmpeg `args` (which read
 * MPEG-TS on standard input), giving each chunk ffmpeg writes to standard output to `onChunk`
 * (awaited: it may hold the remux back). `what` names the file
 * in errors ("the MP4").
 * @param {{ job: RemuxJob, client: CallbackClient, binaries: Binaries, signal: AbortSignal }} run
 * @param {{
 *   rendition: string,
 *   args: string[],
 *   what: string,
 *   onProgress: (fraction: number) => void,
 *   onChunk?: (chunk: Buffer) => Promise<void> | void,
 * }} remux
 */
export async function remuxSegments(run, remux) {
  const { job, client, binaries, signal } = run;
  const count = segmentCount(job.plan);
  const child = spawn(binaries.ffmpeg.path, remux.args, {
    env: { ...process.env, ...binaries.ffmpeg.env },
    stdio: ["pipe", "pipe", "pipe"],
  });
  const kill = () => child.kill("SIGKILL");
  signal.addEventListener("abort", kill, { once: true });
  // A remux that neither takes a segment in nor gives bytes out for STALL_MS is stuck: killed.
  let lastActivity = Date.now();
  let stalled = false;
  const watchdog = setInterval(() => {
    if (Date.now() - lastActivity > STALL_MS) {
      stalled = true;
      kill();
    }
  }, 1000);
  let stderr = "";
  child.stderr.setEncoding("utf8");
  child.stderr.on("data", (chunk) => {
    stderr = (stderr + chunk).slice(-4000);
  });
  const exited = /** @type {Promise<[number | null, NodeJS.Signals | null]>} */ (once(child, "close"));
  // ffmpeg closing its input early (it failed) must not crash the process with EPIPE.
  child.stdin.on("error", () => {});
  /** @param {Promise<void>} work */
  const orKill = (work) =>
    work.catch((error) => {
      kill();
      throw error;
    });

  const feed = async () => {
    const fix = continuityFixer();
    for (let index = 0; index < count; index++) {
      const segment = await client.getSegment(remux.rendition, index);
      for await (const chunk of segment) {
        if (!child.stdin.write(fix(/** @type {Buffer} */ (chunk)))) await once(child.stdin, "drain");
        lastActivity = Date.now();
      }
      remux.onProgress((index + 1) / count);
    }
    child.stdin.end();
  };
  const collect = async () => {
    for await (const chunk of child.stdout) {
      lastActivity = Date.now();
      await remux.onChunk?.(/** @type {Buffer} */ (chunk));
    }
  };

  try {
    const [, , [code, killed]] = await Promise.all([orKill(feed()), orKill(collect()), exited]);
    if (code !== 0)
      throw new Error(`ffmpeg ${killed ? `killed by ${killed}` : `exit code ${code}`}: ${stderr.trim().slice(-500)}`);
  } catch (error) {
    if (stalled) throw new Error(`${remux.what}'s ffmpeg made no progress for ${STALL_MS / 1000} s`);
    throw error;
  } finally {
    clearInterval(watchdog);
    signal.removeEventListener("abort", kill);
  }
}
