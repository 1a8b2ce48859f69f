// The background a route is timed against in `npm run bench`'s loaded pass: another tenant that
// keeps deleting videos (bulk deletes of 20 with open uploads: the deletions queue's R2 aborts and
// outbox publishing) while 5 webhook endpoints receive every event (the delivery queue and lanes).
// Bounded: one cycle at a time, a pause between cycles, and it stops when told. It runs in a process
// of its own (`startBackgroundLoad` spawns this file), so its client and its webhook receiver never
// share the event loop of the process that times the routes.
import { spawn } from "node:child_process";
import { keyedTenant } from "../test/e2e/client.ts";
import { startReceiver } from "../test/e2e/receiver.ts";

const VIDEOS_PER_CYCLE = 20;
const ENDPOINTS = 5;
const PAUSE_MS = 250;

async function runLoad(baseUrl: string) {
  const receiver = await startReceiver(200);
  const { call, endpoint } = await keyedTenant(baseUrl, { name: "background", keys: 20 });
  for (let i = 0; i < ENDPOINTS; i++) await endpoint(receiver.url(`/background/${i}`));
  let running = true;
  let cycles = 0;
  const loop = (async () => {
    while (running) {
      const ids: string[] = [];
      for (let i = 0; i < VIDEOS_PER_CYCLE && running; i++) {
        const created = await call("POST", "/v1/videos", {});
        if (created.status !== 201) continue;
        ids.push(created.json.video.id);
        // An open upload with a part: its delete has an R2 multipart upload to abort.
        await call("PUT", `/v1/videos/${created.json.video.id}/upload/parts/1`, new Uint8Array(1024));
      }
      if (ids.length > 0) await call("POST", "/v1/videos/bulk", { action: "delete", videoIds: ids });
      cycles += 1;
      await new Promise((resolve) => setTimeout(resolve, PAUSE_MS));
    }
  })();
  return {
    describe: () =>
      `${cycles} cycles of ${VIDEOS_PER_CYCLE} videos created, a part uploaded each and bulk-deleted, ` +
      `${receiver.received.length} webhook deliveries received by ${ENDPOINTS} endpoints`,
    stop: async () => {
      running = false;
      await loop;
      await receiver.close();
    },
  };
}

/** Starts the load in a child process; `stop` ends it and returns what it did. */
export async function startBackgroundLoad(baseUrl: string) {
  const child = spawn(process.execPath, [import.meta.filename, baseUrl], { stdio: ["ignore", "pipe", "inherit"] });
  let output = "";
  child.stdout.on("data", (chunk) => {
    output += chunk;
  });
  await new Promise<void>((resolve, reject) => {
    const check = setInterval(() => {
      if (output.includes("started")) {
        clearInterval(check);
        resolve();
      }
    }, 100);
    child.once("exit", (code) => {
      clearInterval(check);
      reject(new Error(`background load exited early (${code}): ${output}`));
    });
  });
  return {
    stop: async () => {
      const exited = new Promise((resolve) => child.once("exit", resolve));
      child.kill("SIGTERM");
      await exited;
      return (
        output
          .split("\n")
          .find((line) => line.startsWith("did:"))
          ?.slice(4)
          .trim() ?? "(no summary)"
      );
    },
  };
}

if (import.meta.main) {
  const load = await runLoad(process.argv[2] ?? "");
  console.log("started");
  process.once("SIGTERM", async () => {
    const summary = load.describe();
    await load.stop();
    console.log(`did: ${summary}`);
    process.exit(0);
  });
}
