import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { makeHostileSources } from "../../encoder/test/media.mjs";
import { keyedTenant } from "./client.ts";
import {
  binaries,
  clip,
  longClip,
  loopedClip,
  storedKeys,
  uploadFile,
  uploadVideo,
  type Video,
  waitForPlayable,
  waitForStatus,
} from "./media.ts";
import { type DevServer, startDevServer } from "./server.ts";

/**
 * The encoding's promises (docs/encoding.md#what-it-promises) through `npm run dev`: status only
 * moves forward while every encoder is busy, one project's encodings never hold another's 3 s clip
 * past 60 s, and hostile or odd sources end as promised.
 */

let server: DevServer;
let hostile: Awaited<ReturnType<typeof makeHostileSources>>;

beforeAll(async () => {
  server = await startDevServer();
  hostile = await makeHostileSources(binaries, mkdtempSync(path.join(tmpdir(), "video-api-hostile-")));
}, 180_000);

afterAll(async () => {
  await server?.stop();
});

/** Every status the video shows while it is polled, in order, until `done` says so. */
function watchStatuses(call: Awaited<ReturnType<typeof keyedTenant>>["call"], id: string) {
  const seen: string[] = [];
  let stop = false;
  const watching = (async () => {
    while (!stop) {
      const video = (await call("GET", `/v1/videos/${id}`)).json as Video;
      if (seen.at(-1) !== video.status) seen.push(video.status);
      if (video.status === "ready" || video.status === "errored") return;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  })();
  return {
    seen,
    done: async () => {
      await watching;
      stop = true;
    },
  };
}

/** Another project (named `name`) uploads a 3 s clip: it is ready within 60 s, whatever runs meanwhile. */
async function expectClipReadyWithinAMinute(name: string) {
  const other = await keyedTenant(server.baseUrl, { name });
  const small = await clip({ width: 640, height: 360, seconds: 3 });
  const started = Date.now();
  const { id } = await uploadVideo(other.call, small);
  const video = await waitForStatus(other.call, id, ["ready", "errored"], 60);
  expect(video.status).toBe("ready");
  expect(Date.now() - started).toBeLessThan(60_000);
}

describe("encoding rules, end to end through npm run dev", () => {
  it("six videos completed together only move forward: uploaded, processing, ready", async () => {
    const tenant = await keyedTenant(server.baseUrl, { name: "six" });
    const source = await clip({ width: 1280, height: 720, seconds: 20 });
    const created = await Promise.all(
      Array.from({ length: 6 }, async () => {
        const made = await tenant.call("POST", "/v1/videos", {});
        const id = made.json.video.id as string;
        const part = await tenant.call("PUT", `/v1/videos/${id}/upload/parts/1`, source);
        return { id, etag: part.json.etag as string };
      }),
    );
    const watches = await Promise.all(
      created.map(async ({ id, etag }) => {
        const watch = watchStatuses(tenant.call, id);
        const done = await tenant.call("POST", `/v1/videos/${id}/upload/complete`, {
          parts: [{ partNumber: 1, etag }],
        });
        expect(done.status).toBe(200);
        return watch;
      }),
    );
    for (const watch of watches) await watch.done();
    const order = ["waiting_for_upload", "upload_completing", "uploaded", "processing", "ready"];
    for (const { seen } of watches) {
      expect(seen.at(-1)).toBe("ready");
      const ranks = seen.map((status) => order.indexOf(status));
      expect(ranks).toEqual([...ranks].sort((a, b) => a - b));
    }
  }, 300_000);

  it("one project's long encodings never hold another project's 3 s clip past 60 s", async () => {
    const busy = await keyedTenant(server.baseUrl, { name: "busy" });
    const long = await longClip({ width: 1920, height: 1080, seconds: 180, rate: 30 });
    await Promise.all(Array.from({ length: 3 }, () => uploadFile(busy.call, long)));
    // Their background runs hold every slot now.
    await new Promise((resolve) => setTimeout(resolve, 3000));
    await expectClipReadyWithinAMinute("other");
  }, 300_000);

  it("another project's 10-hour source never holds a 3 s clip past 60 s: its storyboard is made in short jobs", async () => {
    // Each picture of a 10-hour source reads its 13 MB index: 200 of them in one job held the only
    // background slot of a 2-core machine for 116 s (the npm-packaged ffmpeg), the clip waiting.
    const busy = await keyedTenant(server.baseUrl, { name: "ten hours" });
    const { video: long } = await uploadFile(busy.call, await loopedClip(10 * 3600));
    await waitForPlayable(busy.call, long.id, 60);
    // Past its poster and first run, into its storyboard.
    await new Promise((resolve) => setTimeout(resolve, 8000));
    await expectClipReadyWithinAMinute("clip");
    // Its encoding stops: the next tests have the machine to themselves.
    expect((await busy.call("DELETE", `/v1/videos/${long.id}`)).status).toBe(204);
  }, 240_000);

  it.each([
    ["an HLS playlist naming a local file, followed by an MPEG-TS", () => hostile.polyglot, /format/],
    ["a 40 ms Matroska file declaring 10 hours", () => hostile.declaresTenHours, /declares 36000 s/],
    ["a picture 100 times wider than tall (pixel aspect 100:1)", () => hostile.wide, /16:1/],
  ])("ends %s errored invalid_source at once, reading nothing else", async (_name, bytes, message) => {
    const tenant = await keyedTenant(server.baseUrl, { name: "hostile" });
    const { id } = await uploadVideo(tenant.call, new Uint8Array(bytes()));
    const video = await waitForStatus(tenant.call, id, ["ready", "errored"], 60);
    expect(video).toMatchObject({ status: "errored", playback: null, error: { code: "invalid_source" } });
    expect(video.error?.message).toMatch(message);
    expect(storedKeys(server.persistTo, `videos/${tenant.projectId}/${id}/`)).toEqual([
      `videos/${tenant.projectId}/${id}/source`,
    ]);
  });

  it.each([
    ["a test pattern, 320×240", () => hostile.twoFrames, 320, 240],
    // A segment of it is nine MPEG-TS packets from the npm-packaged ffmpeg (encoder/segments.mjs).
    ["one colour, 640×360", () => hostile.flatTwoFrames, 640, 360],
  ])("makes two frames at 1 fps of %s a ready video of 2 s", async (_name, bytes, width, height) => {
    const tenant = await keyedTenant(server.baseUrl, { name: "sparse" });
    const { id } = await uploadVideo(tenant.call, new Uint8Array(bytes()));
    const video = await waitForStatus(tenant.call, id, ["ready", "errored"], 60);
    expect(video).toMatchObject({ status: "ready", duration: 2, width, height });
  });
});
