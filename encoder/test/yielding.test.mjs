// @ts-check
import { spawn } from "node:child_process";
import { readFile } from "node:fs/promises";
import { describe, expect, it } from "vitest";
import { endLeftovers } from "../yielding.mjs";

/** A process's state letter (T: stopped), or null once it is gone. @param {number} pid */
async function stateOf(pid) {
  const stat = await readFile(`/proc/${pid}/stat`, "latin1").catch(() => null);
  return stat === null ? null : (stat.slice(stat.lastIndexOf(")") + 2).split(" ")[0] ?? null);
}

/** Polls until `pid`'s state is one of `states`, for up to 5 s. @param {number} pid @param {(string | null)[]} states */
async function until(pid, states) {
  for (let i = 0; i < 100 && !states.includes(await stateOf(pid)); i++) await new Promise((r) => setTimeout(r, 50));
  return stateOf(pid);
}

/** Ended: gone, or dead and not yet reaped by its new parent. */
const ENDED = [null, "Z"];

describe("the background work an encoder that died left stopped", () => {
  // The "binary" is node itself (on every machine these tests run on), idling.
  const idle = ["-e", "setTimeout(() => {}, 300_000)"];

  it("ends a stopped process of its binaries whose encoder died, in its process group, and no other", async () => {
    // An "encoder" starts a background process, stops it and dies: the process is left stopped,
    // its parent now outside this group.
    const encoder = spawn(
      process.execPath,
      [
        "-e",
        `const c = require("node:child_process").spawn(process.execPath, ${JSON.stringify(idle)}, { stdio: "ignore" });
         process.kill(c.pid, "SIGSTOP");
         console.log(c.pid);
         process.exit(0);`,
      ],
      { stdio: ["ignore", "pipe", "inherit"] },
    );
    let out = "";
    encoder.stdout.on("data", (chunk) => {
      out += chunk;
    });
    await new Promise((resolve) => encoder.once("exit", resolve));
    const left = Number(out.trim());
    expect(await until(left, ["T"])).toBe("T");
    // A live encoder's own stopped child (this process is its parent) is left alone.
    const own = spawn(process.execPath, idle, { stdio: "ignore" });
    const ownPid = /** @type {number} */ (own.pid);
    own.kill("SIGSTOP");
    expect(await until(ownPid, ["T"])).toBe("T");
    try {
      // Not one of the binaries named: left alone.
      expect(await endLeftovers(["/nonexistent/ffmpeg"])).toEqual([]);
      expect(await endLeftovers([process.execPath])).toEqual([left]);
      expect(ENDED).toContain(await until(left, ENDED));
      expect(await stateOf(ownPid)).toBe("T");
    } finally {
      own.kill("SIGKILL");
      try {
        process.kill(left, "SIGKILL");
      } catch {
        // Ended by the test.
      }
    }
  });
});
