// `node scripts/measure-storage.ts`: what a video, a delivery attempt and an event cost in D1,
// table and indexes included (docs/scaling.md). Creates rows through the API of a real dev
// server, stops it, then reads the bytes of each table and index from SQLite's dbstat.
import { readdirSync } from "node:fs";
import path from "node:path";
import { DatabaseSync } from "node:sqlite";
import { keyedTenant } from "../test/e2e/client.ts";
import { startReceiver } from "../test/e2e/receiver.ts";
import { startDevServer } from "../test/e2e/server.ts";

const VIDEOS = Number(process.env.MEASURE_VIDEOS ?? 400);
const server = await startDevServer();
const receiver = await startReceiver(500);
try {
  const { call, endpoint } = await keyedTenant(server.baseUrl, { name: "measure", keys: Math.ceil(VIDEOS / 20) + 2 });
  // Two endpoints: every deleted video gives one event and two first attempts (failed: they answer 500).
  for (const name of ["a", "b"]) await endpoint(receiver.url(`/${name}`));
  const ids: string[] = [];
  for (let i = 0; i < VIDEOS; i++) {
    const created = await call("POST", "/v1/videos", { title: `Video number ${i} of the measurement` });
    ids.push(created.json.video.id);
  }
  const deleted = ids.slice(0, VIDEOS / 2);
  for (let i = 0; i < deleted.length; i += 100) {
    await call("POST", "/v1/videos/bulk", { action: "delete", videoIds: deleted.slice(i, i + 100) });
  }
  // Let the deliveries happen (and fail), so each event has its attempts.
  await new Promise((resolve) => setTimeout(resolve, 8000));
} finally {
  await server.kill();
  await receiver.close();
}

const dir = path.join(server.persistTo, "v3", "d1", "miniflare-D1DatabaseObject");
const file = readdirSync(dir).find((name) => name.endsWith(".sqlite") && name !== "metadata.sqlite");
const db = new DatabaseSync(path.join(dir, file ?? ""));
const owners = new Map(
  (
    db.prepare("SELECT name, tbl_name FROM sqlite_master WHERE type IN ('table', 'index')").all() as {
      name: string;
      tbl_name: string;
    }[]
  ).map((row) => [row.name, row.tbl_name]),
);
const bytes = new Map<string, number>();
for (const row of db.prepare("SELECT name, sum(pgsize) AS size FROM dbstat GROUP BY name").all() as {
  name: string;
  size: number;
}[]) {
  const table = owners.get(row.name) ?? row.name;
  bytes.set(table, (bytes.get(table) ?? 0) + row.size);
}
console.log("D1 bytes per row, table and its indexes (pages used, so small tables round up):");
for (const table of ["videos", "outbox_events", "webhook_deliveries"]) {
  const count = (db.prepare(`SELECT count(*) AS n FROM ${table}`).get() as { n: number }).n;
  const size = bytes.get(table) ?? 0;
  console.log(
    `  ${table.padEnd(20)} ${String(count).padStart(6)} rows  ${String(size).padStart(9)} bytes  ${(size / count).toFixed(0).padStart(5)} bytes/row`,
  );
}
