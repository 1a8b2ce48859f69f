// @ts-check
// Remuxing a video's stored segments without encoding anything again (the MP4's and the M4A's
// parts, files.mjs): what an MPEG-TS segment holds (its streams, their first timestamps, their
// bytes), the segments joined as one continuous stream, and one ffmpeg run over them in memory.

import { spawn } from "node:child_process";
import { once } from "node:events";
import { runsInBackground } from "./binaries.mjs";
import { background } from "./yielding.mjs";

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

/**
 * The elementary streams of an MPEG-TS (the PMT named by its PAT): the PID of its H.264 video and
 * of its AAC audio, each null when there is none.
 * @param {Buffer} ts whole packets, from the start of a segment
 * @returns {{ video: number | null, audio: number | null }}
 */
export function tsStreams(ts) {
  /** @type {number | null} */
  let pmt = null;
  for (let at = 0; at + TS_PACKET <= ts.length; at += TS_PACKET) {
    const pid = pidAt(ts, at);
    const payload = payloadStart(ts, at);
    if (payload === null || !(ts.readUInt8(at + 1) & 0x40)) continue;
    // A section starts after its pointer field; its 12-bit fields are read from two bytes.
    const section = payload + 1 + ts.readUInt8(payload);
    const twelve = (/** @type {number} */ offset) => ts.readUInt16BE(offset) & 0x0fff;
    if (pid === 0 && pmt === null) {
      // PAT: the first program's PMT PID (13 bits).
      pmt = ts.readUInt16BE(section + 10) & 0x1fff;
    } else if (pid === pmt) {
      const end = section + 3 + twelve(section + 1) - 4;
      /** @type {{ video: number | null, audio: number | null }} */
      const streams = { video: null, audio: null };
      // Stream entries after the program info, up to the CRC (4 bytes) at the section's end.
      for (let entry = section + 12 + twelve(section + 10); entry < end; entry += 5 + twelve(entry + 3)) {
        const type = ts.readUInt8(entry);
        const elementary = ts.readUInt16BE(entry + 1) & 0x1fff;
        if (type === 0x1b && streams.video === null) streams.video = elementary;
        if (type === 0x0f && streams.audio === null) streams.audio = elementary;
      }
      return streams;
    }
  }
  throw new Error("no PAT and PMT in the segment");
}

/** @param {Buffer} ts @param {number} at a packet's offset */
function pidAt(ts, at) {
  if (ts.readUInt8(at) !== 0x47) throw new Error("not an MPEG-TS packet boundary");
  return ts.readUInt16BE(at + 1) & 0x1fff;
}

/** Where a packet's payload starts, or null when it has none. @param {Buffer} ts @param {number} at */
function payloadStart(ts, at) {
  const control = (ts.readUInt8(at + 3) >> 4) & 3;
  if (control === 0 || control === 2) return null;
  const start = control === 3 ? at + 5 + ts.readUInt8(at + 4) : at + 4;
  return start < at + TS_PACKET ? start : null;
}

/**
 * The first timestamp (90 kHz) of the stream on `pid`: its first PES's decode time when it has
 * one, else its presentation time; null when the stream has no PES here.
 * @param {Buffer} ts @param {number} pid
 */
export function firstTimestamp(ts, pid) {
  for (let at = 0; at + TS_PACKET <= ts.length; at += TS_PACKET) {
    if (pidAt(ts, at) !== pid || !(ts.readUInt8(at + 1) & 0x40)) continue;
    const pes = payloadStart(ts, at);
    if (pes === null || ts.readUIntBE(pes, 3) !== 1) continue;
    const flags = ts.readUInt8(pes + 7) >> 6;
    if (flags === 0) continue;
    // 33 bits in five bytes, with marker bits between.
    const timestamp = (/** @type {number} */ offset) =>
      ((ts.readUInt8(offset) >> 1) & 7) * 2 ** 30 +
      (ts.readUInt16BE(offset + 1) >> 1) * 2 ** 15 +
      (ts.readUInt16BE(offset + 3) >> 1);
    return flags === 3 ? timestamp(pes + 14) : timestamp(pes + 9);
  }
  return null;
}

/** The bytes of the packets of `pids` in a segment. @param {Buffer} ts @param {number[]} pids */
export function streamBytes(ts, pids) {
  let bytes = 0;
  for (let at = 0; at + TS_PACKET <= ts.length; at += TS_PACKET) if (pids.includes(pidAt(ts, at))) bytes += TS_PACKET;
  return bytes;
}

/** How long a remux may write nothing before it is taken for stuck (it copies a part's worth, a few MiB). */
const REMUX_STALL_MS = 60_000;

/**
 * Remuxes `input` (MPEG-TS, held in memory) with ffmpeg `args` (reading standard input, writing
 * standard output); resolves with everything ffmpeg wrote. A background job's remux is background
 * work: niced, and stopped while a viewer's work runs (an interactive one would stop itself).
 * @param {import("./binaries.mjs").Binaries} binaries @param {string[]} args @param {Buffer} input
 * @param {AbortSignal} signal @param {boolean} inBackground
 * @returns {Promise<Buffer>}
 */
export async function remux(binaries, args, input, signal, inBackground) {
  const child = spawn(binaries.ffmpeg.path, args, {
    env: { ...process.env, ...binaries.ffmpeg.env },
    stdio: ["pipe", "pipe", "pipe"],
  });
  if (inBackground) child.once("spawn", () => runsInBackground(child));
  const kill = () => child.kill("SIGKILL");
  signal.addEventListener("abort", kill, { once: true });
  let active = Date.now();
  const timer = setInterval(() => {
    if (inBackground && background.stopped) active = Date.now();
    else if (Date.now() - active > REMUX_STALL_MS) kill();
  }, 1000);
  let stderr = "";
  child.stderr.setEncoding("utf8");
  child.stderr.on("data", (chunk) => {
    stderr = (stderr + chunk).slice(-4000);
  });
  /** @type {Buffer[]} */
  const out = [];
  child.stdout.on("data", (chunk) => {
    active = Date.now();
    out.push(chunk);
  });
  // ffmpeg closing its input early (it failed) must not crash the process with EPIPE.
  child.stdin.on("error", () => {});
  child.stdin.end(input);
  try {
    const [code, killed] = /** @type {[number | null, NodeJS.Signals | null]} */ (await once(child, "close"));
    if (code !== 0) {
      throw new Error(
        `the remux's ffmpeg ${killed ? `was killed by ${killed}` : `exited ${code}`}: ${stderr.trim().slice(-500)}`,
      );
    }
    return Buffer.concat(out);
  } finally {
    clearInterval(timer);
    signal.removeEventListener("abort", kill);
  }
}
