import { createHmac } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Client } from "./client.ts";
import { type Received, startReceiver } from "./receiver.ts";
import { type DevServer, startDevServer } from "./server.ts";

let server: DevServer;
let receiver: Awaited<ReturnType<typeof startReceiver>>;

beforeAll(async () => {
  // Answers 200 once the statuses pushed to `answers` run out.
  receiver = await startReceiver(200);
  server = await startDevServer();
});

afterAll(async () => {
  await server?.stop();
  await receiver?.close();
});

async function until<T>(check: () => Promise<T | undefined>, seconds: number): Promise<T> {
  const deadline = Date.now() + seconds * 1000;
  while (Date.now() < deadline) {
    const value = await check();
    if (value !== undefined) return value;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  throw new Error(`nothing within ${seconds} s`);
}

describe("webhooks over HTTP", () => {
  it("delivers video.deleted, signed, retrying a failed attempt after 5 s", async () => {
    const owner = new Client(server.baseUrl);
    await owner.onboard();
    const project = await owner.request("POST", "/v1/projects", { body: { name: "hooks" } });
    const key = await owner.request("POST", `/v1/projects/${project.json.id}/api-keys`, {
      body: { name: "k", scopes: ["read", "write"], mode: "test" },
    });
    const client = new Client(server.baseUrl);
    const headers = { authorization: `Bearer ${key.json.key}` };
    const call = (method: string, path: string, body?: unknown) => client.request(method, path, { body, headers });

    const base = `/v1/projects/${project.json.id}/webhook-endpoints`;
    const endpoint = await call("POST", base, { url: receiver.url("/hook") });
    expect(endpoint.status).toBe(201);

    receiver.answers.push(500);
    const video = await call("POST", "/v1/videos", {});
    expect((await call("DELETE", `/v1/videos/${video.json.video.id}`)).status).toBe(204);

    const delivered = await until(async () => (receiver.received.length >= 2 ? receiver.received : undefined), 45);
    const [first, second] = delivered as [Received, Received];
    expect(first.headers["webhook-id"]).toBe(second.headers["webhook-id"]);
    const event = JSON.parse(second.body);
    expect(event).toMatchObject({
      type: "video.deleted",
      data: { id: video.json.video.id, projectId: project.json.id },
    });

    const secret = Buffer.from(String(endpoint.json.secret).slice("whsec_".length), "base64");
    const signed = `${second.headers["webhook-id"]}.${second.headers["webhook-timestamp"]}.${second.body}`;
    expect(second.headers["webhook-signature"]).toBe(
      `v1,${createHmac("sha256", secret).update(signed).digest("base64")}`,
    );

    const attempts = await until(async () => {
      const page = await call("GET", `${base}/${endpoint.json.id}/deliveries`);
      return page.json.data.some((a: { state: string }) => a.state === "succeeded") ? page.json.data : undefined;
    }, 20);
    expect(attempts.map((a: { attempt: number; state: string }) => [a.attempt, a.state])).toEqual([
      [2, "succeeded"],
      [1, "failed"],
    ]);
  });
});
