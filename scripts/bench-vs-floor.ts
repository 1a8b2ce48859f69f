// `npm run bench:vs-floor`: each of these routes of `npm run dev` beside the bench floor Worker
// (scripts/bench-floor) doing only that route's required round trips, and each Worker's bare 404,
// interleaved sample by sample (service bare, service route, floor bare, floor route) so that both
// see the same machine at the same moment. Prints each route's median, the floor's, and their ratio
// (issue 25 holds every route within 1.2x of its floor); BENCH_SAMPLES (default 100) per case.
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { loadavg } from "node:os";
import path from "node:path";
import { Client } from "../test/e2e/client.ts";
import { startDevServer } from "../test/e2e/server.ts";
import { paddedPng } from "../test/support/images.ts";
import { startFloorWorker } from "./floor-worker.ts";

const SAMPLES = Number(process.env.BENCH_SAMPLES ?? 100);
const WARMUP = 10;
/** Calls per caller before the next one takes over: under every per-caller limit (30 a minute for bulk). */
const PER_CALLER = 25;
/** A project's bucket of a per-caller policy holds 10x the caller's: 300 bulk or thumbnail calls a minute. */
const PROJECT_LIMITED_SAMPLES = Math.min(SAMPLES, 300 - WARMUP - 40);
const median = (values: number[]) => [...values].sort((a, b) => a - b)[values.length >> 1] ?? Number.NaN;

const [server, floor] = await Promise.all([startDevServer(), startFloorWorker()]);
try {
  const base = server.baseUrl;
  const callers = Math.ceil((SAMPLES + WARMUP) / PER_CALLER) + 1;
  const owner = new Client(base);
  await owner.onboard();
  const projectId = (await owner.request("POST", "/v1/projects", { body: { name: "vs floor" } })).json.id as string;
  const keys: Record<string, string>[] = [];
  for (let i = 0; i < callers; i++) {
    const made = await owner.request("POST", `/v1/projects/${projectId}/api-keys`, {
      body: { name: `bench ${i}`, scopes: ["read", "write"], mode: "test" },
    });
    keys.push({ authorization: `Bearer ${made.json.key}` });
  }
  const key = (i: number) => keys[Math.floor(i / PER_CALLER) % keys.length] as Record<string, string>;
  const client = new Client(base);
  const ids: string[] = [];
  for (let i = 0; i < 101; i++) {
    ids.push((await client.request("POST", "/v1/videos", { body: {}, headers: key(0) })).json.video.id as string);
  }
  const [video] = ids;
  const owners: { client: Client; path: string }[] = [];
  for (let i = 0; i < callers; i++) {
    const session = new Client(base);
    await session.onboard();
    const own = (await session.request("POST", "/v1/projects", { body: { name: "settings" } })).json.id as string;
    owners.push({ client: session, path: `/v1/projects/${own}/encoding-settings` });
  }
  // A page of 100 attempts: an endpoint, a video.deleted event, and 150 attempts of it written in
  // the local database (a delivery needs a network this machine does not reach).
  // The event is published before the endpoint exists, so no real delivery is attempted.
  await client.request("DELETE", `/v1/videos/${ids.pop()}`, { headers: key(0) });
  await new Promise((resolve) => setTimeout(resolve, 2500));
  const endpoint = (
    await owner.request("POST", `/v1/projects/${projectId}/webhook-endpoints`, {
      body: { url: "https://hooks.example.com/bench" },
    })
  ).json.id as string;
  const seeded = spawnSync(
    "wrangler",
    [
      "d1",
      "execute",
      "DB",
      "--local",
      "--persist-to",
      server.persistTo,
      "--command",
      `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 150)
       INSERT INTO webhook_deliveries (id, endpoint_id, event_id, event_type, state, attempt, response_status,
         duration_ms, created_at, completed_at, due_at)
       SELECT printf('01FLOOR%019d', i), '${endpoint}', (SELECT id FROM outbox_events WHERE project_id = '${projectId}' LIMIT 1),
         'video.deleted', 'succeeded', i + 1, 200, 12, strftime('%Y-%m-%dT%H:%M:%fZ', 'now', '-' || i || ' seconds'),
         strftime('%Y-%m-%dT%H:%M:%fZ', 'now', '-' || i || ' seconds'), strftime('%Y-%m-%dT%H:%M:%fZ', 'now', '-' || i || ' seconds')
       FROM n`.replace(/\s+/g, " "),
    ],
    { encoding: "utf8", env: { ...process.env, CI: "true", WRANGLER_SEND_METRICS: "false" } },
  );
  if (seeded.status !== 0) throw new Error(`seeding attempts: ${seeded.stderr}`);
  const png = new Uint8Array(readFileSync(path.join(import.meta.dirname, "../test/fixtures/images/rgb.png")));
  const thumbnail = new Uint8Array(paddedPng(png, 200 * 1024));
  const put = await client.request("PUT", `/v1/videos/${video}/thumbnail`, {
    body: thumbnail,
    headers: { ...key(0), "content-type": "image/png" },
  });
  const thumbnailPath = new URL(put.json.thumbnailUrl as string).pathname;
  const served = new Uint8Array(await (await fetch(`${base}${thumbnailPath}`)).arrayBuffer());
  await floor.seed("thumbnail", served, "image/png");
  const floorIds = Array.from({ length: 100 }, (_, i) => `item${String(i + 1).padStart(3, "0")}`);

  /** One call to the service, its body read to the end; resolves with its milliseconds. */
  const call = async (pathname: string, init: RequestInit = {}, who: Client = client) => {
    const started = performance.now();
    const headers = { "cf-connecting-ip": who.ip, ...(who.cookie ? { cookie: who.cookie } : {}) };
    const response = await fetch(`${base}${pathname}`, { ...init, headers: { ...headers, ...init.headers } });
    await response.arrayBuffer();
    if (response.status >= 400 && pathname !== "/v1/nothing-here") throw new Error(`${pathname}: ${response.status}`);
    return performance.now() - started;
  };
  const json = (method: string, body: unknown, headers: Record<string, string> = {}) => ({
    method,
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify(body),
  });
  const cases: [string, (i: number) => Promise<number>, (i: number) => Promise<number>, number?][] = [
    ["bare 404", () => call("/v1/nothing-here"), () => floor.call("/bare")],
    ["GET /v1/videos/{id}", (i) => call(`/v1/videos/${video}`, { headers: key(i) }), () => floor.call("/read")],
    [
      "PATCH encoding settings",
      (i) => {
        const who = owners[Math.floor(i / PER_CALLER) % owners.length] as (typeof owners)[number];
        return call(who.path, json("PATCH", { mp4FallbackEnabled: i % 2 === 0 }), who.client);
      },
      (i) => floor.call("/patch", { method: "PATCH", body: JSON.stringify({ mp4FallbackEnabled: i % 2 === 0 }) }),
    ],
    [
      "POST /v1/videos/bulk set_visibility x100",
      (i) =>
        call(
          "/v1/videos/bulk",
          json("POST", { action: "set_visibility", videoIds: ids, visibility: i % 2 ? "public" : "unlisted" }, key(i)),
        ),
      (i) =>
        floor.call("/visibility", {
          method: "POST",
          body: JSON.stringify({ ids: floorIds, state: i % 2 ? "public" : "unlisted" }),
        }),
      PROJECT_LIMITED_SAMPLES,
    ],
    [
      "GET …/deliveries page of 100",
      (i) => call(`/v1/projects/${projectId}/webhook-endpoints/${endpoint}/deliveries?limit=100`, { headers: key(i) }),
      () => floor.call("/page"),
    ],
    ["GET /thumbnails/… 200 KB", () => call(thumbnailPath), () => floor.call("/object?key=thumbnail&d1=1")],
    [
      "PUT /v1/videos/{id}/thumbnail 200 KB",
      (i) =>
        call(`/v1/videos/${video}/thumbnail`, {
          method: "PUT",
          body: thumbnail.slice(),
          headers: { ...key(i), "content-type": "image/png" },
        }),
      () => floor.call("/thumbnail", { method: "PUT", body: thumbnail.slice() }),
      PROJECT_LIMITED_SAMPLES,
    ],
  ];
  console.log(
    `concurrency 1, ${SAMPLES} samples after ${WARMUP} warm-up calls; load average ${loadavg()[0]?.toFixed(2)}`,
  );
  console.log(`${"case".padEnd(42)}  service   floor  ratio   svc bare  floor bare  svc above bare  floor above bare`);
  for (const [name, service, floorCase, samples = SAMPLES] of cases) {
    const t = { sb: [] as number[], s: [] as number[], fb: [] as number[], f: [] as number[] };
    for (let i = 0; i < WARMUP + samples; i++) {
      const sb = await call("/v1/nothing-here");
      const s = await service(i);
      const fb = await floor.call("/bare");
      const f = await floorCase(i);
      if (i < WARMUP) continue;
      t.sb.push(sb);
      t.s.push(s);
      t.fb.push(fb);
      t.f.push(f);
    }
    const [sb, s, fb, f] = [median(t.sb), median(t.s), median(t.fb), median(t.f)];
    console.log(
      `${name.padEnd(42)} ${s.toFixed(2).padStart(8)} ${f.toFixed(2).padStart(7)} ${(s / f).toFixed(2).padStart(6)} ${sb.toFixed(2).padStart(10)} ${fb.toFixed(2).padStart(11)} ${(s - sb).toFixed(2).padStart(15)} ${(f - fb).toFixed(2).padStart(17)}`,
    );
  }
  console.log(
    `load average ${loadavg()
      .map((n) => n.toFixed(2))
      .join(" ")}`,
  );
} finally {
  floor.stop();
  await server.stop();
}
