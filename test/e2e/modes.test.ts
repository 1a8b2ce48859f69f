import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Client } from "./client.ts";
import { clip, uploadVideo, waitForStatus } from "./media.ts";
import { startReceiver } from "./receiver.ts";
import { type DevServer, startDevServer } from "./server.ts";

/**
 * Test mode over HTTP against `npm run dev` (docs/api-guide.md#test-mode-and-going-live): a key of
 * each mode in one project, each blind to the other's videos, uploads and endpoints, and each
 * mode's events delivered to its own endpoints only.
 */

let server: DevServer;
let receiver: Awaited<ReturnType<typeof startReceiver>>;

beforeAll(async () => {
  receiver = await startReceiver(204);
  server = await startDevServer();
});

afterAll(async () => {
  await server?.stop();
  await receiver?.close();
});

async function until<T>(check: () => T | undefined, seconds: number): Promise<T> {
  const deadline = Date.now() + seconds * 1000;
  while (Date.now() < deadline) {
    const value = check();
    if (value !== undefined) return value;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  throw new Error(`nothing within ${seconds} s`);
}

describe("test mode over HTTP", () => {
  it("keeps each key in its own mode, and each mode's events at its own endpoints", async () => {
    const owner = new Client(server.baseUrl);
    await owner.onboard();
    const project = await owner.request("POST", "/v1/projects", { body: { name: "modes" } });
    const projectId = project.json.id as string;
    const keyOf = async (mode: "live" | "test") => {
      const created = await owner.request("POST", `/v1/projects/${projectId}/api-keys`, {
        body: { name: mode, scopes: ["read", "write"], mode },
      });
      const client = new Client(server.baseUrl);
      const headers = { authorization: `Bearer ${created.json.key}` };
      return (method: string, path: string, body?: unknown) => client.request(method, path, { body, headers });
    };
    const as = { live: await keyOf("live"), test: await keyOf("test") };
    const hooks = `/v1/projects/${projectId}/webhook-endpoints`;

    const made = {
      live: {
        endpoint: await as.live("POST", hooks, { url: receiver.url("/live"), eventTypes: ["video.deleted"] }),
        video: await as.live("POST", "/v1/videos", { title: "real" }),
        upload: await as.live("POST", "/v1/uploads", {}),
      },
      test: {
        endpoint: await as.test("POST", hooks, { url: receiver.url("/test"), eventTypes: ["video.deleted"] }),
        video: await as.test("POST", "/v1/videos", { title: "trial" }),
        upload: await as.test("POST", "/v1/uploads", {}),
      },
    };
    for (const [mode, objects] of Object.entries(made)) {
      const livemode = mode === "live";
      expect(objects.endpoint.json.livemode, mode).toBe(livemode);
      expect(objects.video.json.video.livemode, mode).toBe(livemode);
      expect([objects.upload.json.livemode, objects.upload.json.video.livemode], mode).toEqual([livemode, livemode]);
    }

    // Each key: the other mode's objects are unknown, with their own codes; its lists hold its own.
    for (const [mode, other] of [
      ["live", "test"],
      ["test", "live"],
    ] as const) {
      const call = as[mode];
      const theirs = made[other];
      const video = await call("GET", `/v1/videos/${theirs.video.json.video.id}`);
      expect([video.status, video.json.error.code]).toEqual([404, "video_not_found"]);
      const upload = await call("GET", `/v1/uploads/${theirs.upload.json.id}`);
      expect([upload.status, upload.json.error.code]).toEqual([404, "upload_not_found"]);
      const endpoint = await call("DELETE", `${hooks}/${theirs.endpoint.json.id}`);
      expect([endpoint.status, endpoint.json.error.code]).toEqual([404, "endpoint_not_found"]);
      const list = await call("GET", "/v1/videos?limit=100");
      expect(list.json.data.map((v: { id: string }) => v.id).sort()).toEqual(
        [made[mode].video.json.video.id, made[mode].upload.json.video.id].sort(),
      );
    }

    // The dashboard's cookie sees both modes, and narrows.
    const all = await owner.request("GET", `/v1/videos?projectId=${projectId}`);
    expect(all.json.data).toHaveLength(4);
    const tests = await owner.request("GET", `/v1/videos?projectId=${projectId}&mode=test`);
    expect(tests.json.data.map((v: { livemode: boolean }) => v.livemode)).toEqual([false, false]);

    // Each key deletes its own video: each endpoint receives its own mode's video.deleted only.
    for (const mode of ["live", "test"] as const) {
      expect((await as[mode]("DELETE", `/v1/videos/${made[mode].video.json.video.id}`)).status).toBe(204);
    }
    await until(() => (receiver.received.length >= 2 ? true : undefined), 30);
    // A moment more: a stray delivery to the wrong endpoint would come as soon.
    await new Promise((resolve) => setTimeout(resolve, 2000));
    expect(receiver.received).toHaveLength(2);
    // Which endpoint got which: each endpoint's one attempt carries its own mode's video's event.
    const videoOfEvent = Object.fromEntries(
      receiver.received.map((delivery) => {
        const event = JSON.parse(delivery.body) as { type: string; data: { id: string } };
        expect(event.type).toBe("video.deleted");
        return [String(delivery.headers["webhook-id"]), event.data.id];
      }),
    );
    for (const mode of ["live", "test"] as const) {
      const attempts = await as[mode]("GET", `${hooks}/${made[mode].endpoint.json.id}/deliveries`);
      expect(
        attempts.json.data.map((a: { eventId: string; state: string }) => [videoOfEvent[a.eventId], a.state]),
        mode,
      ).toEqual([[made[mode].video.json.video.id, "succeeded"]]);
    }
  });

  it("encodes a test video from its first 10 seconds only, and a live one whole", async () => {
    const owner = new Client(server.baseUrl);
    await owner.onboard();
    const project = await owner.request("POST", "/v1/projects", { body: { name: "trial" } });
    const source = await clip({ width: 640, height: 360, seconds: 20 });
    const durations: Record<string, { duration: number; listed: number }> = {};
    for (const mode of ["test", "live"] as const) {
      const created = await owner.request("POST", `/v1/projects/${project.json.id}/api-keys`, {
        body: { name: mode, scopes: ["read", "write"], mode },
      });
      const client = new Client(server.baseUrl);
      const call = (method: string, path: string, body?: unknown) =>
        client.request(method, path, { body, headers: { authorization: `Bearer ${created.json.key}` } });
      const { id } = await uploadVideo(call, source);
      const video = await waitForStatus(call, id, ["ready", "errored"], 120);
      expect(video.status, mode).toBe("ready");
      const variant = await (await fetch(`${server.baseUrl}/play/${id}/360p/index.m3u8`)).text();
      const listed = [...variant.matchAll(/#EXTINF:([0-9.]+),/g)].reduce((sum, m) => sum + Number(m[1]), 0);
      durations[mode] = { duration: video.duration ?? 0, listed };
    }
    expect(durations.test?.duration).toBeLessThanOrEqual(10);
    expect(durations.test?.duration).toBeGreaterThan(9.9);
    expect(durations.test?.listed).toBeCloseTo(durations.test?.duration ?? 0, 2);
    expect(durations.live?.duration).toBeCloseTo(20, 0);
  }, 300_000);
});
