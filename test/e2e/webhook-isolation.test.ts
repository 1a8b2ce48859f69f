import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { keyedTenant } from "./client.ts";
import { startHangingServer, startReceiver } from "./receiver.ts";
import { type DevServer, startDevServer } from "./server.ts";

let server: DevServer;
let receiver: Awaited<ReturnType<typeof startReceiver>>;
let hanging: Awaited<ReturnType<typeof startHangingServer>>;

beforeAll(async () => {
  receiver = await startReceiver(200);
  hanging = await startHangingServer();
  server = await startDevServer();
});

afterAll(async () => {
  await server?.stop();
  await receiver?.close();
  await hanging?.close();
});

describe("webhook endpoints are isolated", () => {
  it("delivers each event to a healthy endpoint within 5 s while 20 endpoints hang beside it", async () => {
    const noisy = await keyedTenant(server.baseUrl, { name: "noisy" });
    const quiet = await keyedTenant(server.baseUrl, { name: "quiet" });
    // Twenty endpoints that never answer: nineteen of another tenant, one in the healthy one's project.
    for (let i = 0; i < 19; i++) await noisy.endpoint(hanging.url(`/hang/${i}`));
    await quiet.endpoint(hanging.url("/hang/own"));
    await quiet.endpoint(receiver.url("/healthy"));

    const deletedAt = new Map<string, number>();
    for (let round = 0; round < 5; round++) {
      // The noisy tenant's events first, so the hanging sends are under way when the healthy one's come.
      const noise = await noisy.call("POST", "/v1/videos", {});
      expect((await noisy.call("DELETE", `/v1/videos/${noise.json.video.id}`)).status).toBe(204);
      const video = await quiet.call("POST", "/v1/videos", {});
      expect((await quiet.call("DELETE", `/v1/videos/${video.json.video.id}`)).status).toBe(204);
      deletedAt.set(video.json.video.id, Date.now());
    }

    const arrivedAt = new Map<string, number>();
    const deadline = Date.now() + 30_000;
    while (arrivedAt.size < deletedAt.size && Date.now() < deadline) {
      for (const delivery of receiver.received) {
        const id = JSON.parse(delivery.body).data.id as string;
        if (deletedAt.has(id) && !arrivedAt.has(id)) arrivedAt.set(id, delivery.at);
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const latencies = [...deletedAt].map(([id, at]) => (arrivedAt.get(id) ?? Number.POSITIVE_INFINITY) - at);
    console.log(`healthy endpoint's first attempts, ms after each delete: ${latencies.join(", ")}`);
    for (const latency of latencies) expect(latency).toBeLessThan(5000);
  });
});
