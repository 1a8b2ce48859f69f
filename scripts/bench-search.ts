#!/usr/bin/env node
// `npm run bench:search`: the search figure of
// docs/import-clips-search.md#figures-npm-run-benchsearch. Against a fresh `npm run dev`, one
// project with SEARCH_VIDEOS videos (default 100,000) and another with 100, each seeded straight
// into the local D1 file between two starts of the server (the API would take an hour to make them;
// the rows are what POST /v1/videos writes, and the title index's triggers fill video_titles as
// they would). Then the same searches on both, SEARCH_RUNS times each (default 60, the first 5 not
// counted), at concurrency 1: the median and p95 of each, and the big project's median over the
// small one's (the target: within 2x).
import { readdirSync } from "node:fs";
import { loadavg } from "node:os";
import path from "node:path";
import { DatabaseSync } from "node:sqlite";
import { Client } from "../test/e2e/client.ts";
import { startDevServer } from "../test/e2e/server.ts";
import { percentile } from "./percentile.ts";

const BIG = Number(process.env.SEARCH_VIDEOS ?? 100_000);
const SMALL = 100;
const RUNS = Number(process.env.SEARCH_RUNS ?? 60);
const WARMUP = 5;
const ADJECTIVES = ["quick", "lazy", "bright", "silent", "golden", "frozen", "wild", "gentle", "crimson", "hollow"];
const NOUNS = Array.from({ length: 50 }, (_, i) => `topic${String.fromCharCode(97 + (i % 26))}${Math.floor(i / 26)}`);

const load = () =>
  loadavg()
    .map((n) => n.toFixed(2))
    .join(" ");

async function tenant(baseUrl: string, name: string) {
  const owner = new Client(baseUrl);
  await owner.onboard();
  const project = await owner.request("POST", "/v1/projects", { body: { name } });
  const key = await owner.request("POST", `/v1/projects/${project.json.id}/api-keys`, {
    body: { name: "bench", scopes: ["read", "write"], mode: "live" },
  });
  // One video through the API: its row is the template of the seeded ones.
  const made = await owner.request("POST", "/v1/videos", {
    body: { title: "seed" },
    headers: { authorization: `Bearer ${key.json.key}` },
  });
  if (made.status !== 201) throw new Error(`create: ${made.status} ${made.text}`);
  return { projectId: project.json.id as string, key: key.json.key as string };
}

/** Writes `count` videos of the project into the server's local D1 file (the server stopped). */
function seed(persistTo: string, projectId: string, count: number): void {
  const dir = path.join(persistTo, "v3", "d1", "miniflare-D1DatabaseObject");
  const file = readdirSync(dir).find((name) => name.endsWith(".sqlite") && name !== "metadata.sqlite");
  if (!file) throw new Error(`no D1 database under ${dir}`);
  const db = new DatabaseSync(path.join(dir, file));
  const template = db.prepare("SELECT * FROM videos WHERE project_id = ? LIMIT 1").get(projectId) as Record<
    string,
    unknown
  >;
  const columns = Object.keys(template);
  const insert = db.prepare(
    `INSERT INTO videos (${columns.join(", ")}) VALUES (${columns.map((c) => `:${c}`).join(", ")})`,
  );
  const start = Date.now() - count * 1000;
  db.exec("BEGIN");
  for (let i = 0; i < count; i++) {
    const at = new Date(start + i * 1000).toISOString();
    const id = `${projectId.slice(0, 10)}${String(i).padStart(16, "0")}`;
    insert.run({
      ...Object.fromEntries(columns.map((c) => [`:${c}`, template[c] as string | number | null])),
      ":id": id,
      ":title": `${ADJECTIVES[i % ADJECTIVES.length]} ${NOUNS[(i * 7) % NOUNS.length]} take ${i}`,
      ":created_at": at,
      ":updated_at": at,
      ":tags": JSON.stringify([`tag${i % 10}`]),
      ":metadata": JSON.stringify({ batch: String(i % 100) }),
      ":upload_id": null,
      ":upload_r2_id": null,
    });
  }
  db.exec("COMMIT");
  db.close();
}

const CASES: [string, string][] = [
  ["search, one word (1 title in 50)", `search=${NOUNS[3]}`],
  ["search, two words by prefix", `search=GOLD%20${NOUNS[28]?.slice(0, 6)}`],
  ["search and tag", `search=${NOUNS[3]}&tag=tag9`],
  ["tag (1 video in 10)", "tag=tag3"],
  ["metadata pair (1 in 100)", "metadata[batch]=42"],
  ["plain listing", ""],
];

async function once(baseUrl: string, key: string, query: string): Promise<{ ms: number; rows: number }> {
  const started = performance.now();
  const response = await fetch(`${baseUrl}/v1/videos?limit=20&${query}`, {
    headers: { authorization: `Bearer ${key}` },
  });
  const body = (await response.json()) as { data: unknown[] };
  const ms = performance.now() - started;
  if (response.status !== 200) throw new Error(`${query}: ${response.status} ${JSON.stringify(body)}`);
  return { ms, rows: body.data.length };
}

/** The two projects' figures for one query, their requests alternated so both meet the same load. */
async function time(baseUrl: string, keys: [string, string], query: string): Promise<[number[], number[]]> {
  const figures: [number[], number[]] = [[], []];
  for (let run = 0; run < RUNS; run++) {
    for (const side of [0, 1] as const) {
      const { ms, rows } = await once(baseUrl, keys[side], query);
      if (rows === 0) throw new Error(`${query}: no match, nothing measured`);
      if (run >= WARMUP) figures[side].push(ms);
    }
  }
  return [figures[0].sort((a, b) => a - b), figures[1].sort((a, b) => a - b)];
}

const first = await startDevServer();
const { persistTo } = first;
const big = await tenant(first.baseUrl, "search big");
const small = await tenant(first.baseUrl, "search small");
await first.kill();
const seeding = performance.now();
seed(persistTo, big.projectId, BIG);
seed(persistTo, small.projectId, SMALL);
console.log(
  `seeded ${BIG} + ${SMALL} videos in ${((performance.now() - seeding) / 1000).toFixed(1)} s; load ${load()}`,
);
const server = await startDevServer([], { persistTo });
try {
  console.log(`${"case".padEnd(36)} ${"100 videos".padStart(20)} ${`${BIG} videos`.padStart(22)}   ratio of medians`);
  for (const [name, query] of CASES) {
    const [few, many] = await time(server.baseUrl, [small.key, big.key], query);
    const cell = (f: number[]) => `${percentile(f, 50).toFixed(1)} / ${percentile(f, 95).toFixed(1)} ms`.padStart(20);
    console.log(
      `${name.padEnd(36)} ${cell(few)} ${cell(many).padStart(22)}   ${(percentile(many, 50) / percentile(few, 50)).toFixed(2)}x`,
    );
  }
  console.log(`(median / p95, n=${RUNS - WARMUP} each, concurrency 1); load average ${load()}`);
} finally {
  await server.stop();
}
