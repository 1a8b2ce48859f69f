import { Webhook } from "standardwebhooks";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { keyedTenant } from "./client.ts";
import { clip, probe, uploadVideo, type Video, waitForStatus } from "./media.ts";
import { startReceiver } from "./receiver.ts";
import { type DevServer, startDevServer } from "./server.ts";

let server: DevServer;
let receiver: Awaited<ReturnType<typeof startReceiver>>;
let tenant: Awaited<ReturnType<typeof keyedTenant>>;
let secret: string;
let source: Uint8Array;

beforeAll(async () => {
  receiver = await startReceiver(204);
  server = await startDevServer();
  tenant = await keyedTenant(server.baseUrl, { name: "encoding" });
  secret = (await tenant.endpoint(receiver.url("/encoding"))).secret;
  source = await clip({ width: 640, height: 360, seconds: 3 });
});

afterAll(async () => {
  await server?.stop();
  await receiver?.close();
});

/** The events of one video that reached the receiver, verified. */
function eventsOf(videoId: string) {
  const webhook = new Webhook(secret.replace(/^whsec_/, ""));
  return receiver.received
    .map(
      (delivery) =>
        webhook.verify(delivery.body, delivery.headers as Record<string, string>) as { type: string; data: Video },
    )
    .filter((event) => event.data?.id === videoId);
}

describe("encoding, end to end through npm run dev", () => {
  it("turns an upload into a ready video with HLS, a poster and a signed video.ready", async () => {
    const { id } = await uploadVideo(tenant.call, source, { title: "pattern" });
    const video = await waitForStatus(tenant.call, id, ["ready", "errored"], 60);
    expect(video.status).toBe("ready");
    expect(video.width).toBe(640);
    expect(video.height).toBe(360);
    expect(video.duration).toBeGreaterThan(2.9);
    expect(video.renditions).toEqual([{ resolution: "360p", width: 640, height: 360 }]);
    expect(video.playback).toEqual({ hls: `${server.baseUrl}/play/${id}/master.m3u8`, mp4: null });
    expect(video.error).toBeNull();

    const hls = video.playback?.hls ?? "";
    const master = await fetch(hls);
    expect(master.status).toBe(200);
    expect(master.headers.get("content-type")).toBe("application/vnd.apple.mpegurl");
    expect(master.headers.get("access-control-allow-origin")).toBe("*");
    const text = await master.text();
    expect(text).toMatch(/RESOLUTION=640x360/);
    const { streams } = await probe(hls);
    expect(streams.find((stream) => stream.codec_type === "video")).toMatchObject({
      codec_name: "h264",
      width: 640,
      height: 360,
    });
    expect(streams.some((stream) => stream.codec_type === "audio" && stream.codec_name === "aac")).toBe(true);
    const variant = await (await fetch(`${server.baseUrl}/play/${id}/360p/index.m3u8`)).text();
    expect(variant).toContain("#EXT-X-ENDLIST");
    expect(variant.match(/seg_\d+\.ts/g)?.length).toBe(1);

    const poster = await fetch(video.thumbnail.url);
    expect(poster.status).toBe(200);
    expect(poster.headers.get("content-type")).toBe("image/jpeg");

    const deadline = Date.now() + 10_000;
    while (eventsOf(id).length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    const events = eventsOf(id);
    expect(events.map((event) => event.type)).toEqual(["video.ready"]);
    expect(events[0]?.data).toEqual(video);
  });
});
