// `npm run bench:analytics`: viewing analytics (docs/analytics.md) against the real dev server
// and encoder. Figures, not pass/fail (targets in docs/analytics.md):
// 1. a beacon's median against the bare 404 on the same server, sample by sample (target ≤ 1.2×);
// 2. beacons sent as fast as the server takes them (BENCH_FLOOD_CLIENTS at once, "1,4": views of
//    many addresses, every beacon one that counts) while other routes are timed one call at a time:
//    their p95 under the flood against their medians before it (target ≤ 3×), and the beacons a
//    second it took (BENCH_FLOOD=bare floods with the bare 404 instead, for comparison);
// 3. `GET /v1/videos/{id}/analytics` over a video with a million views against one with ten
//    (rollups seeded straight into the local D1: 7 days of hours, and ten hours), interleaved
//    (target: median within 2×).
import { spawnSync } from "node:child_process";
import { keyedTenant } from "../test/e2e/client.ts";
import { clip, uploadVideo, waitForStatus } from "../test/e2e/media.ts";
import { startDevServer } from "../test/e2e/server.ts";
import { percentile } from "./percentile.ts";

const SAMPLES = Number(process.env.BENCH_SAMPLES ?? 200);
const WARMUP = 20;
/** The flood's clients, each sending its next beacon as soon as the last is answered: one run per number. */
const FLOOD_CLIENTS = (process.env.BENCH_FLOOD_CLIENTS ?? "1,4").split(",").map(Number);
/** Which of the three parts to run. */
const PHASES = new Set((process.env.BENCH_PHASES ?? "1,2,3").split(","));
const FLOOD_SECONDS = Number(process.env.BENCH_FLOOD_SECONDS ?? 15);
/**
 * What the flood sends: beacons, or (BENCH_FLOOD=bare) the bare 404 instead, to tell what a
 * beacon costs the other routes from what any request sent as fast as it is answered costs them.
 */
const FLOOD = process.env.BENCH_FLOOD === "bare" ? "bare" : "beacons";
const MILLION = 1_000_000;
const HOURS = 7 * 24;

let beacons = 0;
/**
 * Who sends the next beacon: 500 beacons to a client address (under the 600 a minute each may
 * send), from 20 views of it (the views of a video one address may start a minute, docs/analytics.md;
 * each view well under its 60 beacons a minute), so every beacon timed here counts and
 * is queued, as an honest player's do.
 */
function sender(): { viewId: string; ip: string } {
  const n = beacons++;
  const address = Math.floor(n / 500);
  return {
    viewId: `bench-view-${process.pid}-${address}-${n % 20}`,
    ip: `10.77.${Math.floor(address / 250) % 250}.${address % 250}`,
  };
}

function stats(times: number[]) {
  const sorted = [...times].sort((a, b) => a - b);
  return { n: sorted.length, median: percentile(sorted, 50), p95: percentile(sorted, 95) };
}

const fmt = (ms: number) => ms.toFixed(2).padStart(8);

async function main() {
  let server = await startDevServer();
  try {
    let base = server.baseUrl;
    const tenant = await keyedTenant(base, { name: "bench-analytics" });
    let videoId: string;
    if (PHASES.has("1") || PHASES.has("2")) {
      ({ id: videoId } = await uploadVideo(tenant.call, await clip({ width: 640, height: 360, seconds: 4 })));
      await waitForStatus(tenant.call, videoId, ["ready"], 120);
    } else {
      videoId = (await tenant.call("POST", "/v1/videos", {})).json.video.id as string;
    }

    const timed = async (url: string, init: RequestInit, expect: number) => {
      const start = performance.now();
      const response = await fetch(url, init);
      await response.arrayBuffer();
      const ms = performance.now() - start;
      if (response.status !== expect)
        throw new Error(`${init.method ?? "GET"} ${url}: ${response.status}, not ${expect}`);
      return ms;
    };
    const bare = () => timed(`${base}/v1/no-such-route`, {}, 404);
    const beacon = ({ viewId, ip } = sender()) =>
      timed(
        `${base}/play/${videoId}/beacons`,
        {
          method: "POST",
          headers: { "content-type": "application/json", "cf-connecting-ip": ip },
          body: JSON.stringify({
            viewId,
            event: "heartbeat",
            playheadSeconds: 1,
            watchedMs: 1000,
            rebufferCount: 0,
            rebufferMs: 0,
            rendition: "360p",
            startupMs: 300,
          }),
        },
        204,
      );

    if (PHASES.has("1")) {
      // 1. A beacon beside the bare 404, sample by sample.
      const bareTimes: number[] = [];
      const beaconTimes: number[] = [];
      for (let i = 0; i < WARMUP + SAMPLES; i++) {
        const b = await bare();
        const t = await beacon();
        if (i < WARMUP) continue;
        bareTimes.push(b);
        beaconTimes.push(t);
      }
      const bareStats = stats(bareTimes);
      const beaconStats = stats(beaconTimes);
      console.log(
        `\n1. A beacon against the bare 404 (concurrency 1, ${SAMPLES} samples after ${WARMUP}, interleaved)`,
      );
      console.log(`${"case".padEnd(36)}   median      p95`);
      console.log(`${"unknown route (bare 404)".padEnd(36)} ${fmt(bareStats.median)} ${fmt(bareStats.p95)}`);
      console.log(`${"POST /play/{id}/beacons".padEnd(36)} ${fmt(beaconStats.median)} ${fmt(beaconStats.p95)}`);
      console.log(
        `beacon median / bare median: ${(beaconStats.median / bareStats.median).toFixed(2)}x (target <= 1.2x)`,
      );
    }
    // 2. The other routes, quiet and then under a flood of beacons (or of bare 404s: BENCH_FLOOD).
    const auth = { authorization: `Bearer ${tenant.keys[0]}` };
    const others: [string, () => Promise<number>][] = [
      ["unknown route (bare 404)", bare],
      ["GET /v1/videos/{id}", () => timed(`${base}/v1/videos/${videoId}`, { headers: auth }, 200)],
      ["GET /play/{id}/master.m3u8", () => timed(`${base}/play/${videoId}/master.m3u8`, {}, 200)],
      ["GET /v1/videos/{id}/analytics", () => timed(`${base}/v1/videos/${videoId}/analytics`, { headers: auth }, 200)],
    ];
    const round = async (into: Map<string, number[]>) => {
      for (const [name, run] of others) into.get(name)?.push(await run());
    };
    const quiet = new Map(others.map(([name]) => [name, [] as number[]]));
    if (PHASES.has("2")) for (let i = 0; i < 100; i++) await round(quiet);
    let sent = 0;
    for (const clients of PHASES.has("2") ? FLOOD_CLIENTS : []) {
      const loaded = new Map(others.map(([name]) => [name, [] as number[]]));
      let running = true;
      let answered = 0;
      let refused = 0;
      const floodStart = performance.now();
      const flood = Array.from({ length: clients }, async () => {
        while (running) {
          try {
            await (FLOOD === "bare" ? bare() : beacon());
            answered += 1;
          } catch {
            refused += 1;
          }
        }
      });
      while (performance.now() - floodStart < FLOOD_SECONDS * 1000) await round(loaded);
      running = false;
      await Promise.all(flood);
      const floodMs = performance.now() - floodStart;
      if (FLOOD === "beacons") sent += answered;
      console.log(
        `\n2. Other routes, one call at a time, while ${clients} client(s) send ${FLOOD === "bare" ? "bare 404s" : "beacons"} ` +
          `as fast as they are answered (${FLOOD_SECONDS} s): ${answered} answered as expected ` +
          `(${((answered / floodMs) * 1000).toFixed(0)} a second), ${refused} not`,
      );
      console.log(
        `${"route".padEnd(36)}  quiet median  quiet p95    n  flood median  flood p95  flood p95 / quiet median`,
      );
      for (const [name] of others) {
        const q = stats(quiet.get(name) ?? []);
        const l = stats(loaded.get(name) ?? []);
        console.log(
          `${name.padEnd(36)} ${fmt(q.median)}     ${fmt(q.p95)} ${String(l.n).padStart(4)} ${fmt(l.median)}    ${fmt(l.p95)}   ${(l.p95 / q.median).toFixed(2)}x`,
        );
      }
    }

    if (PHASES.has("3")) {
      // 3. An answer over a million views against one over ten.
      // The flood's beacons are folded by the queue's consumer meanwhile: wait until it is done.
      let folded = -1;
      for (;;) {
        await new Promise((resolve) => setTimeout(resolve, 6000));
        const now = (await tenant.call("GET", `/v1/videos/${videoId}/analytics`)).json.views as number;
        if (now === folded) break;
        folded = now;
      }
      if (sent > 0)
        console.log(
          `the consumer folded ${folded} views of the beacons sent above (${WARMUP + SAMPLES + sent} beacons)`,
        );
      const million = (await tenant.call("POST", "/v1/videos", {})).json.video.id as string;
      const ten = (await tenant.call("POST", "/v1/videos", {})).json.video.id as string;
      // Seeded with the server stopped (its state kept), then started again on it: seeded while it
      // ran, its local D1 written from outside, it dropped its connections (three runs).
      await server.kill();
      const seedStart = performance.now();
      seedMillion(server.persistTo, million, tenant.projectId);
      seedTen(server.persistTo, ten, tenant.projectId);
      console.log(
        `\nseeded ${MILLION} views and 10 (rollups) in ${((performance.now() - seedStart) / 1000).toFixed(1)} s`,
      );
      server = await startDevServer([], { persistTo: server.persistTo });
      base = server.baseUrl;
      const millionTimes: number[] = [];
      const tenTimes: number[] = [];
      for (let i = 0; i < WARMUP + SAMPLES; i++) {
        const a = await timed(`${base}/v1/videos/${million}/analytics?interval=hour`, { headers: auth }, 200);
        const b = await timed(`${base}/v1/videos/${ten}/analytics?interval=hour`, { headers: auth }, 200);
        if (i < WARMUP) continue;
        millionTimes.push(a);
        tenTimes.push(b);
      }
      const m = stats(millionTimes);
      const t = stats(tenTimes);
      const check = (await (await fetch(`${base}/v1/videos/${million}/analytics`, { headers: auth })).json()) as {
        views: number;
      };
      console.log(
        `\n3. GET /v1/videos/{id}/analytics?interval=hour (last 7 days), ${SAMPLES} samples each, interleaved`,
      );
      console.log(`${"video".padEnd(36)}   median      p95`);
      console.log(`${`${check.views} views`.padEnd(36)} ${fmt(m.median)} ${fmt(m.p95)}`);
      console.log(`${"10 views".padEnd(36)} ${fmt(t.median)} ${fmt(t.p95)}`);
      console.log(`million / ten (median): ${(m.median / t.median).toFixed(2)}x (target <= 2x)`);
    }
  } finally {
    await server.stop();
  }
}

function execute(persistTo: string, sql: string) {
  const result = spawnSync(
    "wrangler",
    ["d1", "execute", "DB", "--local", "--persist-to", persistTo, "--command", sql.replace(/\s+/g, " ")],
    { encoding: "utf8", env: { ...process.env, CI: "true", WRANGLER_SEND_METRICS: "false" } },
  );
  if (result.status !== 0) throw new Error(`seeding failed:\n${result.stdout}\n${result.stderr}`);
}

/**
 * A million views of `videoId` over the last 7 days, as the consumer would have left them in the
 * rollups an answer reads: per hour the video's and the project's (views, watch time, rebuffering,
 * startup histogram) and four renditions' watch time. (Their million view rows are not seeded: no
 * answer reads analytics_views, and writing them from outside, 70–140 s of the local database's
 * write lock, made the dev server drop its connections in two runs.)
 */
function seedMillion(persistTo: string, videoId: string, projectId: string) {
  const first = Math.floor(Date.now() / 3_600_000) - HOURS + 1;
  const perHour = Math.ceil(MILLION / HOURS);
  for (const subject of [videoId, `project:${projectId}:live`]) {
    execute(
      persistTo,
      `WITH RECURSIVE h(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM h WHERE i < ${HOURS - 1})
       INSERT OR REPLACE INTO analytics_hours (subject, hour, project_id, livemode, views, watch_ms, rebuffer_ms, rebuffer_count,
         error_views, s03, s04, s05, s06, s07)
       SELECT '${subject}', ${first} + i, '${projectId}', 1, CASE WHEN i < ${HOURS - 1} THEN ${perHour} ELSE ${MILLION - perHour * (HOURS - 1)} END,
         ${perHour} * 60000, ${perHour} * 500, ${perHour}, ${Math.floor(perHour / 100)},
         ${perHour} / 5, ${perHour} / 5, ${perHour} / 5, ${perHour} / 5, ${perHour} - 4 * (${perHour} / 5) FROM h`,
    );
    execute(
      persistTo,
      `WITH RECURSIVE h(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM h WHERE i < ${HOURS - 1}),
         r(resolution) AS (VALUES ('360p'), ('480p'), ('720p'), ('1080p'))
       INSERT OR REPLACE INTO analytics_rendition_hours (subject, hour, resolution, watch_ms)
       SELECT '${subject}', ${first} + i, resolution, ${perHour} * 15000 FROM h, r`,
    );
  }
}

/** Ten views of `videoId`, one an hour over the last ten hours, with their renditions. */
function seedTen(persistTo: string, videoId: string, projectId: string) {
  const first = Math.floor(Date.now() / 3_600_000) - 9;
  execute(
    persistTo,
    `WITH RECURSIVE h(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM h WHERE i < 9)
     INSERT INTO analytics_hours (subject, hour, project_id, livemode, views, watch_ms, rebuffer_ms, rebuffer_count, error_views, s04)
     SELECT '${videoId}', ${first} + i, '${projectId}', 1, 1, 60000, 500, 1, 0, 1 FROM h`,
  );
  execute(
    persistTo,
    `WITH RECURSIVE h(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM h WHERE i < 9)
     INSERT INTO analytics_rendition_hours (subject, hour, resolution, watch_ms)
     SELECT '${videoId}', ${first} + i, '360p', 60000 FROM h`,
  );
}

await main();
