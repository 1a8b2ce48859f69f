// @ts-check
// Starts the real encoder (`node encoder/server.mjs`) as a child process on a free port, and
// stops it by its pid.

import { spawn } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

const SERVER = fileURLToPath(new URL("../server.mjs", import.meta.url));

/**
 * @param {Record<string, string>} [env] added to (and overriding) the test's environment
 */
export async function startEncoder(env = {}) {
  const child = spawn(process.execPath, [SERVER], {
    env: { ...process.env, ENCODER_PORT: "0", ENCODER_HOST: "127.0.0.1", ENCODER_HEARTBEAT_MS: "200", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  /** @type {string[]} */
  const lines = [];
  let pending = "";
  child.stdout.setEncoding("utf8");
  child.stderr.setEncoding("utf8");
  child.stderr.on("data", (chunk) => lines.push(...String(chunk).split("\n").filter(Boolean)));
  const exited = new Promise((resolve) => child.on("exit", (code, signal) => resolve({ code, signal })));
  const origin = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`encoder did not start: ${lines.join("\n")}`)), 20_000);
    child.stdout.on("data", (chunk) => {
      pending += chunk;
      const parts = pending.split("\n");
      pending = parts.pop() ?? "";
      for (const line of parts) {
        lines.push(line);
        const match = /listening on (http:\/\/\S+)/.exec(line);
        if (match) {
          clearTimeout(timer);
          resolve(match[1]);
        }
      }
    });
    exited.then(() => reject(new Error(`encoder exited: ${lines.join("\n")}`)));
  });
  return {
    /** @type {string} */
    origin,
    pid: /** @type {number} */ (child.pid),
    lines,
    exited,
    /** The pids of the encoder's own child processes (ffmpeg, ffprobe) that are alive. */
    children() {
      return childrenOf(/** @type {number} */ (child.pid));
    },
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
      await exited;
    },
  };
}

/** @typedef {Awaited<ReturnType<typeof startEncoder>>} EncoderProcess */

/** @param {number} parent */
export function childrenOf(parent) {
  /** @type {number[]} */
  const found = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      // pid (comm) state ppid …; comm may contain spaces and parentheses.
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      if (Number(fields[1]) === parent && fields[0] !== "Z") found.push(Number(entry));
    } catch {
      // the process ended while we looked
    }
  }
  return found;
}
