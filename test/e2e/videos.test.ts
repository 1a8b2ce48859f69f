import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Client } from "./client.ts";
import { type DevServer, startDevServer } from "./server.ts";

let server: DevServer;
beforeAll(async () => {
  server = await startDevServer();
});
afterAll(async () => {
  await server?.stop();
});

async function workspace() {
  const owner = new Client(server.baseUrl);
  await owner.onboard();
  const project = await owner.request("POST", "/v1/projects", { body: { name: "videos" } });
  const key = await owner.request("POST", `/v1/projects/${project.json.id}/api-keys`, {
    body: { name: "server", scopes: ["read", "write"], mode: "test" },
  });
  const client = new Client(server.baseUrl);
  const headers = { authorization: `Bearer ${key.json.key}` };
  const call = (method: string, path: string, body?: unknown) => client.request(method, path, { body, headers });
  return { call, projectId: project.json.id as string };
}

describe("videos over HTTP", () => {
  it("uploads a video in two parts, lists it, and deletes it", async () => {
    const { call } = await workspace();
    const created = await call("POST", "/v1/videos", { title: "Trailer" });
    expect(created.status).toBe(201);
    const id = created.json.video.id as string;

    // R2 wants every part but the last to be at least 5 MiB.
    const first = new Uint8Array(5 * 1024 * 1024).fill(1);
    const second = new Uint8Array(1024).fill(2);
    const parts = [];
    for (const [n, bytes] of [first, second].entries()) {
      const part = await call("PUT", `/v1/videos/${id}/upload/parts/${n + 1}`, bytes);
      expect(part.status).toBe(200);
      parts.push({ partNumber: part.json.partNumber, etag: part.json.etag });
    }
    const complete = await call("POST", `/v1/videos/${id}/upload/complete`, { parts });
    expect(complete.status).toBe(200);
    expect(complete.json.status).toBe("uploaded");

    const list = await call("GET", "/v1/videos?limit=10");
    expect(list.json.data.map((video: { id: string }) => video.id)).toEqual([id]);
    expect(list.json.nextCursor).toBeNull();

    expect((await call("DELETE", `/v1/videos/${id}`)).status).toBe(204);
    const gone = await call("GET", `/v1/videos/${id}`);
    expect(gone.status).toBe(404);
    expect(gone.json.error.code).toBe("video_not_found");
  });

  it("runs a bulk delete with duplicates and unknown ids, and limits bulk calls to exactly 30 a minute", async () => {
    const { call } = await workspace();
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push((await call("POST", "/v1/videos", {})).json.video.id);
    const unknown = "01ARZ3NDEKTSV4RRFFQ69G5FAV";
    const first = ids[0] as string;
    const bulk = await call("POST", "/v1/videos/bulk", {
      action: "delete",
      videoIds: [first.toLowerCase(), ...ids, unknown],
    });
    expect(bulk.status).toBe(200);
    expect(bulk.json.results).toEqual([
      { id: ids[0], ok: true },
      { id: ids[1], ok: true },
      { id: ids[2], ok: true },
      { id: unknown, ok: false, error: { code: "video_not_found", message: expect.any(String) } },
    ]);

    const burst = await Promise.all(
      Array.from({ length: 40 }, () => call("POST", "/v1/videos/bulk", { action: "delete", videoIds: [unknown] })),
    );
    // One call was spent above, so 29 of the 40 pass.
    expect(burst.filter((response) => response.status === 200)).toHaveLength(29);
    expect(burst.filter((response) => response.status === 429)).toHaveLength(11);
  });
});
