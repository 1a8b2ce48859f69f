// The bench floor Worker (scripts/bench-floor) under `wrangler dev`, on a free port with its own
// state: started by `npm run bench:floor`, and by `npm run bench` for the playback comparison.
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { freePort } from "../test/e2e/server.ts";

export type FloorWorker = Awaited<ReturnType<typeof startFloorWorker>>;

export async function startFloorWorker(port?: number) {
  const bound = port ?? (await freePort());
  const base = `http://127.0.0.1:${bound}`;
  const root = path.join(import.meta.dirname, "..");
  const persistTo = mkdtempSync(path.join(tmpdir(), "bench-floor-"));
  const server = spawn(
    "wrangler",
    [
      "dev",
      "-c",
      "scripts/bench-floor/wrangler.toml",
      "--ip",
      "127.0.0.1",
      "--port",
      String(bound),
      "--persist-to",
      persistTo,
    ],
    { cwd: root, detached: true, stdio: "ignore", env: { ...process.env, CI: "true", WRANGLER_SEND_METRICS: "false" } },
  );
  const stop = () => {
    if (server.pid && server.exitCode === null && server.signalCode === null) process.kill(-server.pid, "SIGTERM");
    rmSync(persistTo, { recursive: true, force: true });
  };

  /** One request, its body read to the end; resolves with its milliseconds. */
  const call = async (pathname: string, init?: RequestInit): Promise<number> => {
    const start = performance.now();
    const response = await fetch(`${base}${pathname}`, init);
    await response.arrayBuffer();
    return performance.now() - start;
  };

  try {
    for (let ready = false, tries = 0; !ready; tries++) {
      if (tries > 120) throw new Error("the floor Worker did not start");
      ready = await call("/setup").then(
        () => true,
        () => new Promise((resolve) => setTimeout(() => resolve(false), 500)),
      );
    }
  } catch (error) {
    stop();
    throw error;
  }

  /** Stores `bytes` of `contentType` under `key` in the floor's R2, for `/object?key=…`. */
  const seed = async (key: string, bytes: Uint8Array<ArrayBuffer>, contentType: string) => {
    const response = await fetch(`${base}/seed?key=${encodeURIComponent(key)}`, {
      method: "PUT",
      body: bytes,
      headers: { "content-type": contentType },
    });
    if (response.status !== 204) throw new Error(`floor seed ${key}: ${response.status}`);
  };
  return { base, call, seed, stop };
}
