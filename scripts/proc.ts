// What the benchmarks read of this machine's processes from /proc (Linux): a process's fields, its
// CPU time, and the dev server's workerd processes.
import { execFileSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";

/** Clock ticks a second, the unit of /proc's CPU times. */
export const CLOCK_TICKS = Number(execFileSync("getconf", ["CLK_TCK"]).toString().trim()) || 100;

/** /proc/<pid>/stat's fields after the command name (field 3, the state, is [0]); null when it is gone. */
export function statOf(pid: number): string[] | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  } catch {
    return null;
  }
}

/** CPU seconds a process has used itself (utime + stime), and with `children` its waited-for children's too. */
export function cpuSeconds(pid: number, children = false): number {
  const fields = statOf(pid)?.map(Number);
  if (!fields) return 0;
  const own = (fields[11] ?? 0) + (fields[12] ?? 0);
  return (own + (children ? (fields[13] ?? 0) + (fields[14] ?? 0) : 0)) / CLOCK_TICKS;
}

/** The workerd processes of the dev server whose process group is `processGroup`: where the Worker runs locally. */
export function workerdPids(processGroup: number): number[] {
  return readdirSync("/proc")
    .filter((name) => /^\d+$/.test(name))
    .filter((pid) => {
      try {
        const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
        return stat.includes("(workerd)") && Number(statOf(Number(pid))?.[2]) === processGroup;
      } catch {
        return false;
      }
    })
    .map(Number);
}
