#!/usr/bin/env node
// `npm run bench:bulk-delete`: issue 25's reproduction of the bulk delete stalls, as a client sees
// them against a fresh `npm run dev`: BULK_VIDEOS fresh videos (default 2,200), then bulk deletes of
// 100 ids each, back to back at concurrency 1, the first BULK_WARMUP (default 2) not counted.
// Prints each delete's time to headers and to the end of its body, then the median, p95 and max of
// the counted ones, and the machine's load average (the figures move with it).
import { loadavg } from "node:os";
import { Client } from "../test/e2e/client.ts";
import { startDevServer } from "../test/e2e/server.ts";
import { percentile } from "./percentile.ts";

const VIDEOS = Number(process.env.BULK_VIDEOS ?? 2200);
const WARMUP = Number(process.env.BULK_WARMUP ?? 2);
const PER_DELETE = 100;

const server = await startDevServer();
try {
  const owner = new Client(server.baseUrl);
  await owner.onboard();
  const project = await owner.request("POST", "/v1/projects", { body: { name: "bulk delete" } });
  const key = await owner.request("POST", `/v1/projects/${project.json.id}/api-keys`, {
    body: { name: "bench", scopes: ["read", "write"], mode: "test" },
  });
  const client = new Client(server.baseUrl);
  const auth = { authorization: `Bearer ${key.json.key}` };
  const ids: string[] = [];
  for (let start = 0; start < VIDEOS; start += 20) {
    const made = await Promise.all(
      Array.from({ length: Math.min(20, VIDEOS - start) }, () =>
        client.request("POST", "/v1/videos", { body: {}, headers: auth }),
      ),
    );
    for (const response of made) {
      if (response.status !== 201) throw new Error(`create: ${response.status} ${response.text}`);
      ids.push(response.json.video.id as string);
    }
  }
  console.log(
    `${ids.length} videos made; load average ${loadavg()
      .map((n) => n.toFixed(2))
      .join(" ")}`,
  );
  const timings: { headers: number; body: number }[] = [];
  for (let start = 0; start < ids.length; start += PER_DELETE) {
    const videoIds = ids.slice(start, start + PER_DELETE);
    const started = performance.now();
    const response = await fetch(`${server.baseUrl}/v1/videos/bulk`, {
      method: "POST",
      headers: { ...auth, "content-type": "application/json", "cf-connecting-ip": client.ip },
      body: JSON.stringify({ action: "delete", videoIds }),
    });
    const headers = performance.now() - started;
    const body = (await response.json()) as { results: { ok: boolean }[] };
    const total = performance.now() - started;
    if (response.status !== 200 || !body.results.every((result) => result.ok)) {
      throw new Error(`bulk delete: ${response.status} ${JSON.stringify(body).slice(0, 200)}`);
    }
    const n = start / PER_DELETE;
    console.log(
      `delete ${n + 1}${n < WARMUP ? " (warm-up)" : ""}: headers ${headers.toFixed(1)} ms, body ${total.toFixed(1)} ms`,
    );
    if (n >= WARMUP) timings.push({ headers, body: total });
  }
  for (const what of ["headers", "body"] as const) {
    const sorted = timings.map((t) => t[what]).sort((a, b) => a - b);
    console.log(
      `${what.padEnd(7)} n=${sorted.length} median ${percentile(sorted, 50).toFixed(1)} ms, p95 ${percentile(sorted, 95).toFixed(1)} ms, max ${(sorted.at(-1) ?? 0).toFixed(1)} ms`,
    );
  }
  console.log(
    `load average ${loadavg()
      .map((n) => n.toFixed(2))
      .join(" ")}`,
  );
} finally {
  await server.stop();
}
