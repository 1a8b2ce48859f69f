import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { Webhook } from "standardwebhooks";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { makeSources } from "../../encoder/test/media.mjs";
import { keyedTenant } from "./client.ts";
import { binaries, clip, probe, storedKeys, uploadVideo, type Video, waitForPlayable, waitForStatus } from "./media.ts";
import { startReceiver } from "./receiver.ts";
import { type DevServer, startDevServer } from "./server.ts";

let server: DevServer;
let receiver: Awaited<ReturnType<typeof startReceiver>>;
let tenant: Awaited<ReturnType<typeof keyedTenant>>;
let secret: string;
let source: Uint8Array;
let sources: Awaited<ReturnType<typeof makeSources>>;

beforeAll(async () => {
  receiver = await startReceiver(204);
  server = await startDevServer();
  tenant = await keyedTenant(server.baseUrl, { name: "encoding" });
  secret = (await tenant.endpoint(receiver.url("/encoding"))).secret;
  source = await clip({ width: 640, height: 360, seconds: 3 });
  sources = await makeSources(binaries, mkdtempSync(path.join(tmpdir(), "video-api-sources-")));
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
    expect(video.playback).toEqual({
      hls: `${server.baseUrl}/play/${id}/master.m3u8`,
      mp4: null,
      m4a: `${server.baseUrl}/play/${id}/audio.m4a`,
    });
    expect(video.error).toBeNull();

    const hls = video.playback?.hls ?? "";
    const master = await fetch(hls);
    expect(master.status).toBe(200);
    expect(master.headers.get("content-type")).toBe("application/vnd.apple.mpegurl");
    expect(master.headers.get("access-control-allow-origin")).toBe("*");
    const text = await master.text();
    // One variant per rendition, each with BANDWIDTH, RESOLUTION and CODECS, by a relative URI.
    const variants = text.split("\n").filter((line) => line.startsWith("#EXT-X-STREAM-INF:"));
    expect(variants).toHaveLength(1);
    expect(variants[0]).toMatch(/BANDWIDTH=\d+/);
    expect(variants[0]).toMatch(/RESOLUTION=640x360/);
    expect(variants[0]).toMatch(/CODECS="avc1\.[0-9a-f]{6},mp4a\.40\.2"/);
    expect(text).toContain("\n360p/index.m3u8");
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

    // The audio only (docs/audio-only.md): AAC, no other stream, the whole duration (±0.1 s).
    const m4a = video.playback?.m4a ?? "";
    const audio = await fetch(m4a, { headers: { range: "bytes=0-7" } });
    expect(audio.status).toBe(206);
    expect(audio.headers.get("content-type")).toBe("audio/mp4");
    await audio.arrayBuffer();
    const heard = (await probe(m4a, ["-show_streams", "-show_format"])) as Awaited<ReturnType<typeof probe>> & {
      format: { duration: string };
    };
    expect(heard.streams.map((stream) => [stream.codec_type, stream.codec_name])).toEqual([["audio", "aac"]]);
    expect(Math.abs(Number(heard.format.duration) - (video.duration ?? 0))).toBeLessThanOrEqual(0.1);

    // The playlists (and the storyboard's WebVTT) are made from the plan: only the segments, the
    // poster, the storyboard's sprite and its tiles (each stored as the frame it shows, a cue per
    // 10 s at most), the M4A and the source are stored.
    const prefix = `videos/${tenant.projectId}/${id}/`;
    const all = storedKeys(server.persistTo, prefix).sort();
    const tiles = all.filter((key) => key.startsWith(`${prefix}frames/`));
    expect(tiles).toHaveLength(Math.ceil((video.duration ?? 0) / 10));
    for (const tile of tiles) expect(tile.slice(prefix.length)).toMatch(/^frames\/\d+-\d+\.jpg$/);
    const stored = all.filter((key) => !tiles.includes(key));
    expect(stored).toEqual(
      ["audio.m4a", "hls/360p/seg_00000.ts", "poster.jpg", "source", "storyboard.jpg"].map(
        (file) => `${prefix}${file}`,
      ),
    );
    const poster = await fetch(video.thumbnail.url);
    expect(poster.status).toBe(200);
    expect(poster.headers.get("content-type")).toBe("image/jpeg");
    await poster.body?.cancel();
    // A frame at the highest rendition's size.
    const frame = (await probe(video.thumbnail.url)).streams[0];
    expect([frame?.width, frame?.height]).toEqual([640, 360]);

    const deadline = Date.now() + 10_000;
    while (eventsOf(id).length < 2 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    const events = eventsOf(id);
    expect(events.map((event) => event.type)).toEqual(["video.playable", "video.ready"]);
    expect(events[0]?.data).toMatchObject({
      status: "processing",
      playback: { hls: video.playback?.hls, mp4: null, m4a: null },
    });
    expect(events[1]?.data).toEqual(video);
  });

  it("applies the project's settings: enabled resolutions, no upscale, the MP4 fallback with ranges, the watermark", async () => {
    const project = `/v1/projects/${tenant.projectId}/encoding-settings`;
    const watermark = await tenant.owner.request("PUT", `${project}/watermark-image`, {
      body: new Uint8Array(sources.watermark),
      headers: { "content-type": "image/png" },
    });
    expect(watermark.status).toBe(200);
    const patched = await tenant.owner.request("PATCH", project, {
      body: {
        enabledResolutions: ["240p", "360p", "1080p"],
        mp4FallbackEnabled: true,
        watermark: { enabled: true, position: "bottom-left", opacity: 0.5 },
      },
    });
    expect(patched.status).toBe(200);
    try {
      const { id } = await uploadVideo(tenant.call, new Uint8Array(sources.portrait));
      const video = await waitForStatus(tenant.call, id, ["ready", "errored"], 60);
      expect(video.status).toBe("ready");
      // A 360×640 source: 240p and 360p, labelled by the shorter side; 1080p would be an upscale.
      expect(video.renditions).toEqual([
        { resolution: "240p", width: 240, height: 426 },
        { resolution: "360p", width: 360, height: 640 },
      ]);
      expect(video.playback?.mp4).toBe(`${server.baseUrl}/play/${id}/video.mp4`);
      const mp4Url = video.playback?.mp4 ?? "";
      const whole = await fetch(mp4Url);
      expect(whole.headers.get("accept-ranges")).toBe("bytes");
      const size = Number(whole.headers.get("content-length"));
      await whole.arrayBuffer();
      const range = await fetch(mp4Url, { headers: { range: "bytes=0-1023" } });
      expect(range.status).toBe(206);
      expect(range.headers.get("content-range")).toBe(`bytes 0-1023/${size}`);
      expect((await range.arrayBuffer()).byteLength).toBe(1024);
      const past = await fetch(mp4Url, { headers: { range: `bytes=${size}-` } });
      expect(past.status).toBe(416);
      expect(past.headers.get("content-range")).toBe(`bytes */${size}`);
      const { streams } = await probe(mp4Url);
      expect(streams.find((stream) => stream.codec_type === "video")).toMatchObject({
        codec_name: "h264",
        width: 360,
        height: 640,
      });
    } finally {
      await tenant.owner.request("PATCH", project, {
        body: {
          enabledResolutions: ["360p", "720p", "1080p"],
          mp4FallbackEnabled: false,
          watermark: { enabled: false },
        },
      });
    }
  });

  it("encodes an 8K source down to the enabled resolutions", async () => {
    const big = await clip({ width: 7680, height: 4320, seconds: 1, audio: false, extra: ["-r", "5"] });
    const { id } = await uploadVideo(tenant.call, big);
    const video = await waitForStatus(tenant.call, id, ["ready", "errored"], 120);
    expect(video).toMatchObject({ status: "ready", width: 7680, height: 4320 });
    expect(video.renditions.map((rendition) => rendition.resolution)).toEqual(["360p", "720p", "1080p"]);
    // A silent source has no audio only file (docs/audio-only.md).
    expect(video.playback?.m4a).toBeNull();
    expect((await fetch(`${server.baseUrl}/play/${id}/audio.m4a`)).status).toBe(404);
  }, 150_000);

  it("turns a rotated phone clip into a portrait video", async () => {
    const { id } = await uploadVideo(tenant.call, new Uint8Array(sources.rotated));
    const video = await waitForStatus(tenant.call, id, ["ready", "errored"], 60);
    expect(video.status).toBe("ready");
    expect(video.height).toBeGreaterThan(video.width ?? 0);
  });

  it.each([
    ["random bytes", () => sources.random],
    ["an audio-only file", () => sources.audioOnly],
    ["a truncated MP4", () => sources.truncated],
    ["an MP4 with its header but no frame", () => sources.headerOnly],
  ])("ends %s errored with invalid_source, one video.errored, nothing playable", async (_name, bytes) => {
    const { id } = await uploadVideo(tenant.call, new Uint8Array(bytes()));
    const video = await waitForStatus(tenant.call, id, ["ready", "errored"], 60);
    expect(video).toMatchObject({ status: "errored", renditions: [], playback: null });
    expect(video.error?.code).toBe("invalid_source");
    expect((await fetch(`${server.baseUrl}/play/${id}/master.m3u8`)).status).toBe(404);
    expect((await fetch(video.thumbnail.url)).status).toBe(404);
    expect(storedKeys(server.persistTo, `videos/${tenant.projectId}/${id}/`)).toEqual([
      `videos/${tenant.projectId}/${id}/source`,
    ]);
    const deadline = Date.now() + 10_000;
    while (eventsOf(id).length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    expect(eventsOf(id).map((event) => event.type)).toEqual(["video.errored"]);
  });

  it("ends a zero-byte source (a tus upload of length 0) errored with invalid_source", async () => {
    const minted = await tenant.call("POST", "/v1/uploads", {});
    expect(minted.status).toBe(201);
    const created = await fetch(minted.json.url, {
      method: "POST",
      headers: { "tus-resumable": "1.0.0", "upload-length": "0" },
    });
    expect(created.status).toBe(201);
    const video = await waitForStatus(tenant.call, minted.json.video.id, ["ready", "errored"], 60);
    expect(video).toMatchObject({ status: "errored", playback: null });
    expect(video.error?.code).toBe("invalid_source");
  });

  it("keeps a private video private: its id URLs need a token, which plays it", async () => {
    const { id } = await uploadVideo(tenant.call, source, { visibility: "private" });
    await waitForStatus(tenant.call, id, ["ready"], 60);
    const byId = await fetch(`${server.baseUrl}/play/${id}/master.m3u8`);
    expect(byId.status).toBe(403);
    expect(((await byId.json()) as { error: { code: string } }).error.code).toBe("playback_token_required");
    const minted = await tenant.call("POST", `/v1/videos/${id}/playback-tokens`, { expiresIn: 120 });
    expect(minted.status).toBe(201);
    const { streams } = await probe(minted.json.hls);
    expect(streams.some((stream) => stream.codec_type === "video")).toBe(true);
  });

  it("deleting a video while it encodes cancels it: never ready, no video.ready, nothing served", async () => {
    const long = await clip({ width: 1280, height: 720, seconds: 60 });
    const { id } = await uploadVideo(tenant.call, long);
    const playing = await waitForPlayable(tenant.call, id, 30);
    // A viewer's segment is being made too.
    const late = fetch(`${server.baseUrl}/play/${id}/720p/seg_00012.ts`).then((response) => response.status);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(playing.status).toBe("processing");
    expect((await tenant.call("DELETE", `/v1/videos/${id}`)).status).toBe(204);
    expect([200, 404]).toContain(await late);
    await new Promise((resolve) => setTimeout(resolve, 8000));
    expect((await tenant.call("GET", `/v1/videos/${id}`)).status).toBe(404);
    expect((await fetch(`${server.baseUrl}/play/${id}/master.m3u8`)).status).toBe(404);
    expect(eventsOf(id).map((event) => event.type)).toEqual(["video.playable", "video.deleted"]);
    expect(storedKeys(server.persistTo, `videos/${tenant.projectId}/${id}/`)).toEqual([]);
    expect(server.output()).toMatch(new RegExp(`job ${id}-[^\n]*cancelled`));
  });
});
