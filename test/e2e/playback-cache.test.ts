import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { keyedTenant } from "./client.ts";
import { clip, uploadVideo, waitForStatus } from "./media.ts";
import { type DevServer, startDevServer } from "./server.ts";

let server: DevServer;
let tenant: Awaited<ReturnType<typeof keyedTenant>>;

beforeAll(async () => {
  server = await startDevServer();
  tenant = await keyedTenant(server.baseUrl, { name: "playback cache" });
});

afterAll(async () => {
  await server?.stop();
});

/** One GET: status, `x-cache` and the bytes. */
async function get(url: string, headers: Record<string, string> = {}) {
  const response = await fetch(url, { headers });
  return {
    status: response.status,
    cache: response.headers.get("x-cache"),
    bytes: new Uint8Array(await response.arrayBuffer()),
  };
}

describe("playback at scale under wrangler dev", () => {
  it("serves a repeated segment from the location's cache, and a private or deleted video at once no more", async () => {
    const { id } = await uploadVideo(tenant.call, await clip({ width: 320, height: 180, seconds: 3 }));
    const video = await waitForStatus(tenant.call, id, ["ready", "errored"], 90);
    expect(video.status).toBe("ready");
    const master = await (await fetch(`${server.baseUrl}/play/${id}/master.m3u8`)).text();
    const rendition = master.match(/([0-9]+p)\/index\.m3u8/)?.[1];
    const playlist = await (await fetch(`${server.baseUrl}/play/${id}/${rendition}/index.m3u8`)).text();
    const segment = `${server.baseUrl}/play/${id}/${rendition}/${playlist.match(/seg_\d+\.ts/)?.[0]}`;

    const first = await get(segment);
    expect(first.status).toBe(200);
    expect(first.cache).toBe("MISS");
    const again = await get(segment);
    expect(again.cache).toBe("HIT");
    expect(again.bytes).toEqual(first.bytes);
    const part = await get(segment, { range: "bytes=100-199" });
    expect(part.status).toBe(206);
    expect(part.cache).toBe("HIT");
    expect(part.bytes).toEqual(first.bytes.slice(100, 200));

    // Made private: the id URL is refused at once; a token holder still gets the cached bytes.
    expect((await tenant.call("PATCH", `/v1/videos/${id}`, { visibility: "private" })).status).toBe(200);
    expect((await get(segment)).status).toBe(403);
    const minted = await tenant.call("POST", `/v1/videos/${id}/playback-tokens`, { expiresIn: 600 });
    const byToken = await get(segment.replace(`/play/${id}/`, `/play/${minted.json.token}/`));
    expect(byToken.status).toBe(200);
    expect(byToken.cache).toBe("HIT");
    expect(byToken.bytes).toEqual(first.bytes);

    // Deleted: its cached bytes are never served again, by id or token.
    expect((await tenant.call("DELETE", `/v1/videos/${id}`)).status).toBe(204);
    expect((await get(segment.replace(`/play/${id}/`, `/play/${minted.json.token}/`))).status).toBe(404);
    expect((await get(segment)).status).toBe(404);
  });
});
