import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Client } from "./client.ts";
import { startReceiver } from "./receiver.ts";
import { type DevServer, startDevServer } from "./server.ts";

const VIDEOS = 100;
let receiver: Awaited<ReturnType<typeof startReceiver>>;
const servers: DevServer[] = [];
/** webhook-id of every delivery received, duplicates included. */
const received = () => receiver.received.map(({ headers }) => String(headers["webhook-id"]));

beforeAll(async () => {
  receiver = await startReceiver();
});

afterAll(async () => {
  for (const server of servers) await server.stop();
  await receiver?.close();
});

describe("no event lost to a crash", () => {
  it(`delivers all ${VIDEOS} events of a bulk delete after the server is killed right after it, none twice`, async () => {
    const first = await startDevServer();
    servers.push(first);
    const owner = new Client(first.baseUrl);
    await owner.onboard();
    const project = await owner.request("POST", "/v1/projects", { body: { name: "crash" } });
    const key = await owner.request("POST", `/v1/projects/${project.json.id}/api-keys`, {
      body: { name: "k", scopes: ["read", "write"], mode: "test" },
    });
    const headers = { authorization: `Bearer ${key.json.key}` };
    const api = (base: string, method: string, path: string, body?: unknown) =>
      new Client(base).request(method, path, { body, headers });
    const endpoint = await api(first.baseUrl, "POST", `/v1/projects/${project.json.id}/webhook-endpoints`, {
      url: receiver.url("/hook"),
    });
    expect(endpoint.status).toBe(201);
    const ids: string[] = [];
    for (let i = 0; i < VIDEOS; i += 20) {
      const batch = await Promise.all(Array.from({ length: 20 }, () => api(first.baseUrl, "POST", "/v1/videos", {})));
      ids.push(...batch.map((r) => r.json.video.id as string));
    }

    const deleted = await api(first.baseUrl, "POST", "/v1/videos/bulk", { action: "delete", videoIds: ids });
    expect(deleted.status).toBe(200);
    expect(deleted.json.results.every((r: { ok: boolean }) => r.ok)).toBe(true);
    await first.kill();
    const killedAt = Date.now();

    const second = await startDevServer([], { persistTo: first.persistTo });
    servers.push(second);
    const deadline = killedAt + 180_000;
    while (new Set(received()).size < VIDEOS && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 1000));
    }
    expect(new Set(received()).size).toBe(VIDEOS);
    const deliveries = (state: string) =>
      api(
        second.baseUrl,
        "GET",
        `/v1/projects/${project.json.id}/webhook-endpoints/${endpoint.json.id}/deliveries?limit=100&state=${state}`,
      );
    // Once every attempt is recorded as succeeded, nothing is pending that could be sent again.
    while ((await deliveries("succeeded")).json.data.length < VIDEOS && Date.now() < deadline + 15_000) {
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
    expect((await deliveries("succeeded")).json.data).toHaveLength(VIDEOS);
    expect((await deliveries("pending")).json.data).toHaveLength(0);
    expect(received()).toHaveLength(VIDEOS);
    console.log(`all ${VIDEOS} events delivered ${((Date.now() - killedAt) / 1000).toFixed(0)} s after the kill`);
  }, 240_000);
});
