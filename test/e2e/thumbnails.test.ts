import { readFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { stripMetadata } from "../../src/images/strip.ts";
import { paddedPng } from "../support/images.ts";
import { Client } from "./client.ts";
import { type DevServer, startDevServer } from "./server.ts";

const fixture = (name: string) =>
  new Uint8Array(readFileSync(path.join(import.meta.dirname, "../fixtures/images", name)));

let server: DevServer;
beforeAll(async () => {
  server = await startDevServer();
});
afterAll(async () => {
  await server?.stop();
});

describe("thumbnails over HTTP", () => {
  it("uploads a custom thumbnail, serves it publicly, replaces it and restores the poster", async () => {
    const owner = new Client(server.baseUrl);
    await owner.onboard();
    const project = await owner.request("POST", "/v1/projects", { body: { name: "thumbs" } });
    const key = await owner.request("POST", `/v1/projects/${project.json.id}/api-keys`, {
      body: { name: "k", scopes: ["write"], mode: "test" },
    });
    const headers = { authorization: `Bearer ${key.json.key}` };
    const api = new Client(server.baseUrl);
    const video = await api.request("POST", "/v1/videos", { body: {}, headers });
    const id = video.json.video.id as string;

    const png = fixture("rgb.png");
    const put = await api.request("PUT", `/v1/videos/${id}/thumbnail`, {
      body: png,
      headers: { ...headers, "content-type": "image/png" },
    });
    expect(put.status).toBe(200);
    const url = put.json.thumbnailUrl as string;
    expect(url.startsWith(server.baseUrl)).toBe(true);

    const served = await fetch(url);
    expect(served.status).toBe(200);
    expect(served.headers.get("content-type")).toBe("image/png");
    expect(served.headers.get("cache-control")).toBe("public, max-age=31536000, immutable");
    // The stored image is the upload less its metadata (docs/images.md).
    expect(new Uint8Array(await served.arrayBuffer())).toEqual(stripMetadata(png, "image/png"));
    const revalidated = await fetch(url, { headers: { "if-none-match": served.headers.get("etag") ?? "" } });
    expect(revalidated.status).toBe(304);

    const exact = paddedPng(png, 5 * 1024 * 1024);
    const large = await api.request("PUT", `/v1/videos/${id}/thumbnail`, {
      body: exact,
      headers: { ...headers, "content-type": "image/png" },
    });
    expect(large.status).toBe(200);
    expect((await fetch(url)).status).toBe(404);

    const tooLarge = await api.request("PUT", `/v1/videos/${id}/thumbnail`, {
      body: paddedPng(png, 5 * 1024 * 1024 + 1),
      headers: { ...headers, "content-type": "image/png" },
    });
    expect(tooLarge.status).toBe(413);

    const restored = await api.request("DELETE", `/v1/videos/${id}/thumbnail`, { headers });
    expect(restored.json).toMatchObject({ source: "auto", videoId: id });
    expect((await fetch(large.json.thumbnailUrl)).status).toBe(404);
  });
});
