import { readdirSync, readFileSync } from "node:fs";

/** Resident memory in bytes: all of it, and the anonymous (heaps, buffers) and file-backed (mapped files) parts. */
export type Resident = { total: number; anonymous: number; file: number };

/**
 * Resident memory of the workerd processes in a dev server's process group, from /proc: the Worker
 * with Miniflare's local R2, D1, queues and Durable Objects. An upper bound for what the Worker
 * itself holds, not its isolate's heap.
 */
export function workerdMemory(processGroup: number): Resident {
  const resident = { total: 0, anonymous: 0, file: 0 };
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      const comm = stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")"));
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      if (comm !== "workerd" || Number(fields[2]) !== processGroup) continue;
      const status = readFileSync(`/proc/${entry}/status`, "utf8");
      const kib = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+)\\s+kB$`, "m").exec(status)?.[1] ?? 0) * 1024;
      resident.total += kib("VmRSS");
      resident.anonymous += kib("RssAnon");
      resident.file += kib("RssFile") + kib("RssShmem");
    } catch {
      // gone meanwhile
    }
  }
  return resident;
}
