import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Client, keyedTenant } from "./client.ts";
import { clip, longClip, uploadFile, uploadVideo, waitForPlayable, waitForStatus } from "./media.ts";
import { startReceiver } from "./receiver.ts";
import { type DevServer, startDevServer } from "./server.ts";

/**
 * Crashes in the middle of an encode: the encoder process alone (during background work, then during
 * a segment a viewer waits for), then the whole dev server. On the same state, the video still
 * becomes ready, with exactly one video.playable and one video.ready: a job its restarted encoder
 * does not know is made again once quiet for 15 s, any job silent for 60 s is taken over.
 */
let receiver: Awaited<ReturnType<typeof startReceiver>>;
let source: Uint8Array;
const servers: DevServer[] = [];

beforeAll(async () => {
  receiver = await startReceiver(204);
  // Long enough to be killed mid-encode on any machine: several seconds of ffmpeg.
  source = await clip({ width: 1280, height: 720, seconds: 30 });
});

afterAll(async () => {
  for (const server of servers) await server.stop();
  await receiver?.close();
});

/** Runs the scheduled sweep every few seconds, as the cron trigger does every minute in production. */
function sweepEvery(server: () => DevServer, ms = 5000) {
  const timer = setInterval(() => {
    fetch(`${server().baseUrl}/cdn-cgi/local/scheduled`)
      .then((response) => response.body?.cancel())
      .catch(() => {});
  }, ms);
  return () => clearInterval(timer);
}

function deliveries(type: string, videoId: string) {
  return receiver.received.filter((delivery) => {
    const event = JSON.parse(delivery.body) as { type: string; data: { id: string } };
    return event.type === type && event.data.id === videoId;
  });
}

/** The pid of the encoder `npm run dev` started last. */
function encoderPid(server: DevServer) {
  const pids = [...server.output().matchAll(/\[dev\] encoder pid (\d+)/g)].map((match) => Number(match[1]));
  return pids.at(-1) as number;
}

/** A processing video of a new tenant on `server`, with an endpoint at the receiver. */
async function encodingVideo(server: DevServer) {
  const tenant = await keyedTenant(server.baseUrl, { name: "crash" });
  await tenant.endpoint(receiver.url("/crash"));
  const { id } = await uploadVideo(tenant.call, source);
  await waitForStatus(tenant.call, id, ["processing"], 30);
  // Into ffmpeg's run, past the download and the probe.
  await new Promise((resolve) => setTimeout(resolve, 2000));
  expect((await tenant.call("GET", `/v1/videos/${id}`)).json.status).toBe("processing");
  return { tenant, id };
}

async function expectOneReady(videoId: string) {
  // A duplicate would follow within moments of the first; give it the time to show.
  await new Promise((resolve) => setTimeout(resolve, 3000));
  expect(deliveries("video.playable", videoId)).toHaveLength(1);
  expect(deliveries("video.ready", videoId)).toHaveLength(1);
}

describe("encoding survives crashes", () => {
  it("the encoder process killed during background work: restarted by npm run dev, its jobs made again, ready once", async () => {
    const server = await startDevServer();
    servers.push(server);
    const { tenant, id } = await encodingVideo(server);
    const killedAt = Date.now();
    process.kill(encoderPid(server), "SIGKILL");
    const stop = sweepEvery(() => server);
    try {
      const video = await waitForStatus(tenant.call, id, ["ready", "errored"], 150);
      expect(video.status).toBe("ready");
      console.log(`encoder killed: ready ${((Date.now() - killedAt) / 1000).toFixed(1)} s after the kill`);
    } finally {
      stop();
    }
    expect(server.output()).toMatch(/\[dev\] encoder exited \(SIGKILL\); starting it again/);
    await expectOneReady(id);
  }, 200_000);

  it("the encoder process killed while a viewer waits for a segment: the segment is made again and served, ready once", async () => {
    const server = await startDevServer();
    servers.push(server);
    const tenant = await keyedTenant(server.baseUrl, { name: "crash-on-demand" });
    await tenant.endpoint(receiver.url("/crash"));
    // Five minutes: the background work is still far from the end when a viewer seeks there.
    const file = await longClip({ width: 1280, height: 720, seconds: 300 });
    const { video } = await uploadFile(tenant.call, file);
    const playable = await waitForPlayable(tenant.call, video.id);
    expect(playable.status).toBe("processing");
    const variant = await (await fetch(`${server.baseUrl}/play/${video.id}/720p/index.m3u8`)).text();
    const segments = variant.split("\n").filter((line) => line.endsWith(".ts"));
    const wanted = `${server.baseUrl}/play/${video.id}/720p/${segments[segments.length - 2]}`;

    // A viewer asks for a segment near the end; the encoder dies while making it.
    const asked = fetch(wanted);
    await new Promise((resolve) => setTimeout(resolve, 300));
    const killedAt = Date.now();
    process.kill(encoderPid(server), "SIGKILL");
    const stop = sweepEvery(() => server);
    try {
      // The viewer's player asks again after each 503's Retry-After, as players do.
      let answer = await asked;
      while (answer.status === 503 && Date.now() - killedAt < 90_000) {
        expect((await answer.json()).error.code).toBe("segment_not_ready");
        await new Promise((resolve) => setTimeout(resolve, Number(answer.headers.get("retry-after") ?? 1) * 1000));
        answer = await fetch(wanted);
      }
      expect(answer.status).toBe(200);
      expect((await answer.arrayBuffer()).byteLength).toBeGreaterThan(0);
      console.log(
        `encoder killed on demand: segment served ${((Date.now() - killedAt) / 1000).toFixed(1)} s after the kill`,
      );
      const ready = await waitForStatus(tenant.call, video.id, ["ready", "errored"], 300);
      expect(ready.status).toBe("ready");
      console.log(`encoder killed on demand: ready ${((Date.now() - killedAt) / 1000).toFixed(1)} s after the kill`);
    } finally {
      stop();
    }
    expect(server.output()).toMatch(/\[dev\] encoder exited \(SIGKILL\); starting it again/);
    await expectOneReady(video.id);
  }, 500_000);

  it("the whole dev server's process group killed mid-encode: started again on its state, ready once", async () => {
    const first = await startDevServer();
    servers.push(first);
    const { tenant, id } = await encodingVideo(first);
    const killedAt = Date.now();
    await first.kill();
    const second = await startDevServer([], { persistTo: first.persistTo });
    servers.push(second);
    // The tenant's key, on the new server (same state, another port).
    const client = new Client(second.baseUrl);
    const call = (method: string, path: string, body?: unknown) =>
      client.request(method, path, { body, headers: { authorization: `Bearer ${tenant.keys[0]}` } });
    const stop = sweepEvery(() => second);
    try {
      const video = await waitForStatus(call, id, ["ready", "errored"], 150);
      expect(video.status).toBe("ready");
      expect(video.playback?.hls).toBe(`${second.baseUrl}/play/${id}/master.m3u8`);
      console.log(`dev server killed: ready ${((Date.now() - killedAt) / 1000).toFixed(1)} s after the kill`);
    } finally {
      stop();
    }
    await expectOneReady(id);
  }, 240_000);
});
