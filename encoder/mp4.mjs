// @ts-check
// An MP4 job: the highest rendition's segments, read back from the Worker one after the other,
// put into one MP4 without encoding anything again (ffmpeg-args.mjs `mp4Args`), streamed out in
// parts of `partSize` bytes that the Worker adds to an R2 multipart upload. Nothing is kept on
// disk, and no request carries more than one part, so an MP4 of any length is made the same way.
// Its index comes first (mp4-index.mjs): the segments are read twice, once to measure, once to send.

import { spawn } from "node:child_process";
import { once } from "node:events";
import { segmentCount, topRendition } from "../media-plan/plan.mjs";
import { mp4Args } from "./ffmpeg-args.mjs";
import { FragmentScanner, indexedHeader } from "./mp4-index.mjs";

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
 * Remuxes the highest rendition's segments, read one after the other, into a fragmented MP4,
 * giving each chunk of it to `onChunk` (awaited: it may hold the remux back).
 * @param {{ job: Mp4Job, client: CallbackClient, binaries: Binaries, signal: AbortSignal }} run
 * @param {(fraction: number) => void} onProgress
 * @param {(chunk: Buffer) => Promise<void> | void} onChunk
 */
async function remux(run, onProgress, onChunk) {
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
      onProgress((index + 1) / count);
    }
    child.stdin.end();
  };
  const collect = async () => {
    for await (const chunk of child.stdout) {
      lastActivity = Date.now();
      await onChunk(/** @type {Buffer} */ (chunk));
    }
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
}

/**
 * The MP4 job, in two passes over the segments (mp4-index.mjs): the first measures the fragments,
 * the second streams the MP4 out with its index first (the `moov` with the duration and a `sidx`
 * of every fragment), in parts of `partSize` bytes. The remux gives the same bytes both times
 * (stream copy, no metadata); the second pass checks that every fragment is where the index says.
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
  const { job, client } = run;
  const scanner = new FragmentScanner();
  await remux(
    run,
    (fraction) => run.onProgress(fraction / 2),
    (chunk) => scanner.push(chunk),
  );
  const scan = scanner.result();
  const header = indexedHeader(scan, job.plan.duration);
  const expected = header.length + scan.fragments.reduce((sum, fragment) => sum + fragment.size, 0);

  /** @type {Part[]} */
  const parts = [];
  let bytes = 0;
  /** @type {Buffer[]} */
  let buffered = [header];
  let size = header.length;
  /** Bytes of the second pass's own ftyp and moov still to drop (the header stands for them). */
  let drop = scan.headerBytes;
  /** @param {Buffer} part */
  const send = async (part) => {
    const partNumber = parts.length + 1;
    parts.push({ partNumber, etag: "" });
    const etag = await client.putPart(partNumber, part);
    /** @type {Part} */ (parts[partNumber - 1]).etag = etag;
  };
  await remux(
    run,
    (fraction) => run.onProgress(0.5 + fraction / 2),
    async (chunk) => {
      let data = chunk;
      if (drop > 0) {
        const dropped = Math.min(drop, data.length);
        drop -= dropped;
        data = data.subarray(dropped);
      }
      buffered.push(data);
      size += data.length;
      while (size >= job.partSize) {
        const all = Buffer.concat(buffered);
        await send(all.subarray(0, job.partSize));
        bytes += job.partSize;
        buffered = [all.subarray(job.partSize)];
        size = all.length - job.partSize;
      }
    },
  );
  bytes += size;
  if (bytes !== expected) {
    throw new Error(`the second remux gave ${bytes} bytes where its index says ${expected}: not the same MP4`);
  }
  if (size > 0 || parts.length === 0) await send(Buffer.concat(buffered));
  return { parts, bytes };
}
