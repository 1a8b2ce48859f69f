import { writeFileSync } from "node:fs";
import { createServer, request as httpRequest } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { keyedTenant } from "./client.ts";
import { longClip, probe, uploadFile, type Video, waitForStatus } from "./media.ts";
import { expectMp4OpensAtOnce } from "./mp4-opens.ts";
import { startReceiver } from "./receiver.ts";
import { type DevServer, freePort, startDevServer } from "./server.ts";

/**
 * Long videos, playable in seconds (docs/encoding.md#long-videos-playable-in-seconds), on a real
 * 10-minute source through `npm run dev`: playable within seconds, segments made as they are asked
 * for, a continuous timeline, bytes that never change, an MP4 over 100 MB, and no request between
 * the encoder and the Worker over 50 MiB (a proxy between them counts every request body).
 */

const MiB = 1024 * 1024;

type Seen = { method: string; path: string; bytes: number };

/** A proxy to `target` that records every request's method, path and body size. */
async function countingProxy(port: number, target: () => string) {
  const seen: Seen[] = [];
  const server = createServer((incoming, outgoing) => {
    const url = new URL(target());
    let bytes = 0;
    const forward = httpRequest(
      {
        host: url.hostname,
        port: url.port,
        method: incoming.method,
        path: incoming.url,
        headers: { ...incoming.headers, host: url.host },
      },
      (answer) => {
        outgoing.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(outgoing);
      },
    );
    forward.on("error", () => outgoing.destroy());
    // A client that goes away (ffmpeg leaves a range once it has what it needs) closes the
    // upstream request too, as its own connection closing would have: left open, each held a
    // response of the whole source in the Worker, and after a few dozen jobs the Worker's answers
    // to ffmpeg were cut short ("error reading header").
    outgoing.on("close", () => forward.destroy());
    incoming.on("data", (chunk: Buffer) => {
      bytes += chunk.length;
    });
    incoming.on("end", () => seen.push({ method: incoming.method ?? "", path: incoming.url ?? "", bytes }));
    incoming.pipe(forward);
  });
  await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve));
  return {
    seen,
    origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

let server: DevServer;
let proxy: Awaited<ReturnType<typeof countingProxy>>;
let receiver: Awaited<ReturnType<typeof startReceiver>>;

beforeAll(async () => {
  receiver = await startReceiver(204);
  const port = await freePort();
  proxy = await countingProxy(port, () => server.baseUrl);
  server = await startDevServer(["--var", `ENCODER_CALLBACK_URL:${proxy.origin}`]);
}, 180_000);

afterAll(async () => {
  await server?.stop();
  await proxy?.close();
  await receiver?.close();
});

/** The first video and audio timestamps of a served segment. */
async function firstTimestamps(url: string) {
  const { packets = [], streams } = (await probe(url, [
    "-show_streams",
    "-show_entries",
    "packet=stream_index,pts_time",
  ])) as {
    streams: { index: number; codec_type: string }[];
    packets?: { stream_index?: number; pts_time?: string }[];
  };
  const first = (type: string) => {
    const index = streams.find((stream) => stream.codec_type === type)?.index;
    return Math.min(...packets.filter((p) => p.stream_index === index).map((p) => Number(p.pts_time)));
  };
  return { video: first("video"), audio: first("audio") };
}

describe("a 10-second source's MP4", () => {
  it("opens at once as a 10-minute one's does: metadata and a seek within 5 s, over HTTP and in Chromium", async () => {
    const tenant = await keyedTenant(server.baseUrl, { name: "short" });
    const settings = await tenant.owner.request("PATCH", `/v1/projects/${tenant.projectId}/encoding-settings`, {
      body: { mp4FallbackEnabled: true },
    });
    expect(settings.status).toBe(200);
    const file = await longClip({ width: 640, height: 360, seconds: 10, rate: 30 });
    const { video } = await uploadFile(tenant.call, file);
    const ready = await waitForStatus(tenant.call, video.id, ["ready", "errored"], 300);
    expect(ready.status).toBe("ready");
    const opened = await expectMp4OpensAtOnce(ready.playback?.mp4 ?? "", 10);
    console.log(`the 10-second MP4 opens: ${JSON.stringify(opened)}`);
  }, 400_000);
});

describe("a 10-minute 720p source, end to end through npm run dev", () => {
  it("is playable within 10 s, plays and seeks anywhere at once, keeps its bytes, and becomes ready with an MP4 over 100 MB", async () => {
    const tenant = await keyedTenant(server.baseUrl, { name: "long" });
    await tenant.endpoint(receiver.url("/long"));
    const settings = await tenant.owner.request("PATCH", `/v1/projects/${tenant.projectId}/encoding-settings`, {
      body: { mp4FallbackEnabled: true },
    });
    expect(settings.status).toBe(200);
    const file = await longClip({ width: 1280, height: 720, seconds: 600, rate: 30 });
    const { video, completedAt } = await uploadFile(tenant.call, file);

    // Playable within 10 s of the completion's answer, still processing.
    let playing: Video | undefined;
    while (Date.now() - completedAt < 10_000) {
      playing = (await tenant.call("GET", `/v1/videos/${video.id}`)).json as Video;
      if (playing.playback?.hls) break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(Date.now() - completedAt).toBeLessThan(10_000);
    expect(playing).toMatchObject({ status: "processing", playback: { mp4: null } });
    expect(playing?.duration).toBeCloseTo(600, 0);
    const base = `${server.baseUrl}/play/${video.id}`;

    // Complete VOD playlists of every rendition the video will have.
    const master = await (await fetch(`${base}/master.m3u8`)).text();
    expect(master).toContain("RESOLUTION=640x360");
    expect(master).toContain("RESOLUTION=1280x720");
    const variant = await (await fetch(`${base}/360p/index.m3u8`)).text();
    expect(variant).toContain("#EXT-X-PLAYLIST-TYPE:VOD");
    expect(variant).toContain("#EXT-X-ENDLIST");
    const durations = [...variant.matchAll(/#EXTINF:([0-9.]+),/g)].map((match) => Number(match[1]));
    const total = durations.reduce((sum, d) => sum + d, 0);
    expect(Math.abs(total - (playing?.duration ?? 0))).toBeLessThan(0.5);

    // Segments not made yet are made as they are asked for: within 10 s for the lowest rendition,
    // within 30 s for any.
    const late = Math.floor(durations.length * 0.9);
    const name = (index: number) => `seg_${String(index).padStart(5, "0")}.ts`;
    const timedGet = async (path: string) => {
      const started = Date.now();
      const response = await fetch(`${base}/${path}`);
      const bytes = new Uint8Array(await response.arrayBuffer());
      return { status: response.status, ms: Date.now() - started, bytes, etag: response.headers.get("etag") };
    };
    const atStart = await timedGet(`360p/${name(0)}`);
    const atLate = await timedGet(`360p/${name(late)}`);
    const high = await timedGet(`720p/${name(late + 3)}`);
    expect([atStart.status, atLate.status, high.status]).toEqual([200, 200, 200]);
    expect(atStart.ms).toBeLessThan(10_000);
    expect(atLate.ms).toBeLessThan(10_000);
    expect(high.ms).toBeLessThan(30_000);

    // A frame anywhere, while processing: within 5 s, at the width asked, the same bytes again.
    const frameAt = await timedGet("thumbnail?time=540.2&width=320");
    expect(frameAt.status).toBe(200);
    expect(frameAt.ms).toBeLessThan(5_000);
    const frameFile = path.join(tmpdir(), `frame-${video.id}.jpg`);
    writeFileSync(frameFile, frameAt.bytes);
    expect((await probe(frameFile)).streams[0]).toMatchObject({ codec_name: "mjpeg", width: 320, height: 180 });
    const frameAgain = await timedGet("thumbnail?time=540.2&width=320");
    expect(frameAgain.etag).toBe(frameAt.etag);
    expect(frameAgain.bytes).toEqual(frameAt.bytes);

    // A continuous timeline: each segment starts where the durations listed before it end.
    const origin = await firstTimestamps(`${base}/360p/${name(0)}`);
    for (const index of [1, late, late + 1]) {
      const at = await firstTimestamps(`${base}/360p/${name(index)}`);
      const listed = durations.slice(0, index).reduce((sum, d) => sum + d, 0);
      expect(Math.abs(at.video - origin.video - listed)).toBeLessThan(0.1);
      expect(Math.abs(at.audio - origin.audio - listed)).toBeLessThan(0.25);
    }

    // The same bytes and ETag when asked again, now and after the video is ready.
    const again = await timedGet(`360p/${name(late)}`);
    expect(again.bytes).toEqual(atLate.bytes);
    expect(again.etag).toBe(atLate.etag);
    const ready = await waitForStatus(tenant.call, video.id, ["ready", "errored"], 900);
    expect(ready.status).toBe("ready");
    const after = await timedGet(`360p/${name(late)}`);
    expect(after.bytes).toEqual(atLate.bytes);
    expect(after.etag).toBe(atLate.etag);
    expect(await (await fetch(`${base}/master.m3u8`)).text()).toBe(master);

    // The storyboard: 60 cues of 10 s, tiles of a 240 px-wide sprite ten to a row.
    const storyboard = await (await fetch(`${base}/storyboard.vtt`)).text();
    const cues = [...storyboard.matchAll(/ --> .*\n(storyboard\.jpg#xywh=\d+,\d+,240,136)/g)];
    expect(cues).toHaveLength(60);
    const sprite = await timedGet("storyboard.jpg");
    const spriteFile = path.join(tmpdir(), `storyboard-${video.id}.jpg`);
    writeFileSync(spriteFile, sprite.bytes);
    expect((await probe(spriteFile)).streams[0]).toMatchObject({ width: 2400, height: 6 * 136 });

    // The MP4: over 100 MB, though no request between the encoder and the Worker carried 50 MiB.
    const mp4 = await fetch(ready.playback?.mp4 ?? "", { method: "HEAD" });
    expect(Number(mp4.headers.get("content-length"))).toBeGreaterThan(100 * 1000 * 1000);
    const callbacks = proxy.seen.filter(
      (seen) => seen.path.startsWith("/internal/encoding/") && seen.path.includes(`/${video.id}/`),
    );
    expect(callbacks.some((seen) => seen.path.includes("/mp4/parts/"))).toBe(true);
    expect(Math.max(...callbacks.map((seen) => seen.bytes))).toBeLessThanOrEqual(50 * MiB);
    // It opens at once (its index first): metadata and a seek within 5 s, over HTTP and in Chromium.
    const opened = await expectMp4OpensAtOnce(ready.playback?.mp4 ?? "", 600);
    console.log(`the 10-minute MP4 opens: ${JSON.stringify(opened)}`);

    // video.playable once, before video.ready.
    const types = receiver.received
      .map((delivery) => JSON.parse(delivery.body) as { type: string; data: { id: string } })
      .filter((event) => event.data.id === video.id)
      .map((event) => event.type);
    expect(types).toEqual(["video.playable", "video.ready"]);
  }, 1_200_000);
});
