// @ts-check
// An MP4 job: the highest rendition's segments, read back from the Worker one after the other,
// put into one MP4 without encoding anything again (ffmpeg-args.mjs `mp4Args`), streamed out in
// parts of `partSize` bytes that the Worker adds to an R2 multipart upload. Nothing is kept on
// disk, and no request carries more than one part, so an MP4 of any length is made the same way.

import { spawn } from "node:child_process";
import { once } from "node:events";
import { segmentCount, topRendition } from "../media-plan/plan.mjs";
import { mp4Args } from "./ffmpeg-args.mjs";

/** @typedef {import("../media-plan/protocol.mjs").Mp4Job} Mp4Job */
/** @typedef {import("../media-plan/protocol.mjs").Part} Part */
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

/** How long the remux may neither take nor give a byte before it is taken for stuck. */
const STALL_MS = 60_000;

/**
 * @param {{
 *   job: Mp4Job,
 *   client: CallbackClient,
 *   binaries: Binaries,
 *   signal: AbortSignal,
 *   onProgress: (fraction: number) => void,
 * }} run
 * @returns {Promise<{ parts: Part[], bytes: number }>}
 */
export async function runMp4(run) {
  const { job, client, binaries, signal } = run;
  const top = topRendition(job.plan);
  const count = segmentCount(job.plan);
  const child = spawn(binaries.ffmpeg.path, mp4Args(), {
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

  const feed = async () => {
    const fix = continuityFixer();
    for (let index = 0; index < count; index++) {
      const segment = await client.getSegment(top.resolution, index);
      for await (const chunk of segment) {
        if (!child.stdin.write(fix(/** @type {Buffer} */ (chunk)))) await once(child.stdin, "drain");
        lastActivity = Date.now();
      }
      run.onProgress((index + 1) / count);
    }
    child.stdin.end();
  };

  /** @type {Part[]} */
  const parts = [];
  let bytes = 0;
  const collect = async () => {
    /** @type {Buffer[]} */
    let buffered = [];
    let size = 0;
    /** @param {Buffer} part */
    const send = async (part) => {
      const partNumber = parts.length + 1;
      parts.push({ partNumber, etag: "" });
      const etag = await client.putPart(partNumber, part);
      /** @type {Part} */ (parts[partNumber - 1]).etag = etag;
    };
    for await (const chunk of child.stdout) {
      const data = /** @type {Buffer} */ (chunk);
      lastActivity = Date.now();
      bytes += data.length;
      buffered.push(data);
      size += data.length;
      while (size >= job.partSize) {
        const all = Buffer.concat(buffered);
        await send(all.subarray(0, job.partSize));
        buffered = [all.subarray(job.partSize)];
        size = all.length - job.partSize;
      }
    }
    if (size > 0 || parts.length === 0) await send(Buffer.concat(buffered));
  };

  try {
    const [, , [code, killed]] = await Promise.all([
      feed().catch((error) => {
        kill();
        throw error;
      }),
      collect().catch((error) => {
        kill();
        throw error;
      }),
      exited,
    ]);
    if (code !== 0)
      throw new Error(`ffmpeg ${killed ? `killed by ${killed}` : `exit code ${code}`}: ${stderr.trim().slice(-500)}`);
  } catch (error) {
    if (stalled) throw new Error(`the MP4's ffmpeg made no progress for ${STALL_MS / 1000} s`);
    throw error;
  } finally {
    clearInterval(watchdog);
    signal.removeEventListener("abort", kill);
  }
  return { parts, bytes };
}
