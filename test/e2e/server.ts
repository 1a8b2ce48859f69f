import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { freePort } from "../../scripts/free-port.mjs";

export const E2E_ADMIN_TOKEN = "e2e-admin-token";

export { freePort };

export type DevServer = {
  baseUrl: string;
  /** The process group of the server: its launcher, wrangler and workerd. */
  processGroup: number;
  /** Where its local D1, R2, Durable Object and queue state lives. */
  persistTo: string;
  /** Stops the server and deletes its state. */
  stop: () => Promise<void>;
  /** SIGKILLs the whole process group at once, as a crash would, and keeps the state. */
  kill: () => Promise<void>;
  /** Everything the server printed so far (wrangler's and the encoder's logs). */
  output: () => string;
};

/**
 * Starts the real dev server (`npm run dev`'s script) on a free port, with its own empty state or
 * the state left in `persistTo`, waits until it answers, and returns a handle that stops its whole
 * process group by id.
 */
export async function startDevServer(
  extraArgs: string[] = [],
  options: { persistTo?: string } = {},
): Promise<DevServer> {
  const persistTo = options.persistTo ?? mkdtempSync(path.join(tmpdir(), "video-api-e2e-"));
  // A port found free can be taken by another process before wrangler binds it (other servers
  // start on this machine too): such a start is tried again, on the same state.
  for (let attempt = 1; ; attempt++) {
    try {
      return await startOnce(extraArgs, persistTo);
    } catch (error) {
      const taken = error instanceof Error && error.message.includes("Address already in use");
      if (!taken || attempt === 3) {
        if (!options.persistTo) rmSync(persistTo, { recursive: true, force: true });
        throw error;
      }
    }
  }
}

async function startOnce(extraArgs: string[], persistTo: string): Promise<DevServer> {
  const port = await freePort();
  const child: ChildProcess = spawn(
    process.execPath,
    [
      "scripts/dev.mjs",
      "--port",
      String(port),
      "--persist-to",
      persistTo,
      "--var",
      `ADMIN_TOKEN:${E2E_ADMIN_TOKEN}`,
      "--var",
      "ALLOWED_ORIGINS:https://dashboard.example",
      "--var",
      "ALLOW_HTTP_WEBHOOKS:true",
      ...extraArgs,
    ],
    { cwd: path.resolve(import.meta.dirname, "../.."), detached: true, stdio: ["ignore", "pipe", "pipe"] },
  );
  let output = "";
  child.stdout?.on("data", (chunk) => {
    output += chunk;
  });
  child.stderr?.on("data", (chunk) => {
    output += chunk;
  });
  const baseUrl = `http://127.0.0.1:${port}`;
  // A process ended by a signal has no exit code, only a signal code.
  const running = () => child.exitCode === null && child.signalCode === null;
  const stop = async () => {
    if (child.pid && running()) {
      const exited = new Promise((resolve) => child.once("exit", resolve));
      process.kill(-child.pid, "SIGTERM");
      await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 5000))]);
      if (running()) process.kill(-child.pid, "SIGKILL");
    }
    rmSync(persistTo, { recursive: true, force: true });
  };
  const kill = async () => {
    if (!child.pid || !running()) return;
    const exited = new Promise((resolve) => child.once("exit", resolve));
    process.kill(-child.pid, "SIGKILL");
    await exited;
  };
  const deadline = Date.now() + 90_000;
  while (Date.now() < deadline) {
    if (!running()) throw new Error(`dev server exited early:\n${output}`);
    try {
      const response = await fetch(`${baseUrl}/v1/openapi.json`);
      if (response.ok) {
        return { baseUrl, processGroup: child.pid as number, persistTo, stop, kill, output: () => output };
      }
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  await kill();
  throw new Error(`dev server did not answer within 90 s:\n${output}`);
}
