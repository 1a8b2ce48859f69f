// The webhook part of `npm run bench`: how long a healthy endpoint waits for its first attempt,
// from the delete's response to the delivery's arrival, alone and with 20 hanging endpoints beside
// it (docs/webhooks.md: within 5 s, whatever other endpoints do).
import { keyedTenant } from "../test/e2e/client.ts";
import { startHangingServer, startReceiver } from "../test/e2e/receiver.ts";
import { startDevServer } from "../test/e2e/server.ts";
import { percentile } from "./percentile.ts";

const EVENTS = Number(process.env.BENCH_WEBHOOK_EVENTS ?? 50);
const HANGING = 20;

export async function benchWebhookIsolation(baseUrl: string) {
  const receiver = await startReceiver(200);
  const hanging = await startHangingServer();
  try {
    const healthy = await keyedTenant(baseUrl, { name: "healthy" });
    const noisy = await keyedTenant(baseUrl, { name: "noisy" });
    await healthy.endpoint(receiver.url("/healthy"));

    /** First-attempt latency of `EVENTS` events, each deleted while the noisy tenant deletes too. */
    const run = async () => {
      const latencies: number[] = [];
      for (let i = 0; i < EVENTS; i++) {
        const noise = await noisy.call("POST", "/v1/videos", {});
        await noisy.call("DELETE", `/v1/videos/${noise.json.video.id}`);
        const video = await healthy.call("POST", "/v1/videos", {});
        const id = video.json.video.id as string;
        const deleted = await healthy.call("DELETE", `/v1/videos/${id}`);
        if (deleted.status !== 204) throw new Error(`delete: ${deleted.status}`);
        const at = Date.now();
        const deadline = at + 60_000;
        let arrived: number | undefined;
        while (arrived === undefined && Date.now() < deadline) {
          arrived = receiver.received.find((r) => JSON.parse(r.body).data.id === id)?.at;
          if (arrived === undefined) await new Promise((resolve) => setTimeout(resolve, 5));
        }
        latencies.push((arrived ?? Number.POSITIVE_INFINITY) - at);
      }
      return latencies.sort((a, b) => a - b);
    };

    const alone = await run();
    for (let i = 0; i < HANGING - 1; i++) await noisy.endpoint(hanging.url(`/hang/${i}`));
    await healthy.endpoint(hanging.url("/hang/own"));
    const beside = await run();
    console.log(
      `webhooks: a healthy endpoint's first attempt, ms from the delete's response to arrival (${EVENTS} events)`,
    );
    for (const [label, sorted] of [
      ["alone", alone],
      [`with ${HANGING} hanging endpoints`, beside],
    ] as const) {
      console.log(
        `  ${label.padEnd(32)} p50 ${percentile(sorted, 50).toFixed(0).padStart(5)}  p99 ${percentile(sorted, 99).toFixed(0).padStart(5)}  max ${(sorted.at(-1) ?? Number.NaN).toFixed(0).padStart(5)}`,
      );
    }
    return {
      alone: { p50: percentile(alone, 50), p99: percentile(alone, 99) },
      beside: { p50: percentile(beside, 50), p99: percentile(beside, 99) },
    };
  } finally {
    await hanging.close();
    await receiver.close();
  }
}

// `node scripts/bench-webhooks.ts` runs this part alone, on a dev server of its own.
if (import.meta.main) {
  const server = await startDevServer();
  try {
    await benchWebhookIsolation(server.baseUrl);
  } finally {
    await server.stop();
  }
}
