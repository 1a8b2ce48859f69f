import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launchChromium, requireChromium, startSite } from "./chromium.ts";
import { keyedTenant } from "./client.ts";
import { clip, longClip, uploadFile, uploadVideo, waitForPlayable, waitForStatus } from "./media.ts";
import { type DevServer, startDevServer } from "./server.ts";

const available = requireChromium("the playback browser tests");

let server: DevServer;
let tenant: Awaited<ReturnType<typeof keyedTenant>>;
let videoId: string;
let elsewhere: Awaited<ReturnType<typeof startSite>>;

/** Plays the page's first <video> muted and waits until its clock has passed `seconds`. */
async function playsPast(page: Page, seconds: number): Promise<number> {
  await page.waitForSelector("video");
  await page.evaluate(() => {
    const video = document.querySelector("video") as HTMLVideoElement;
    video.muted = true;
    return video.play();
  });
  await page.waitForFunction(
    (target) => (document.querySelector("video") as HTMLVideoElement).currentTime > target,
    seconds,
    { timeout: 20_000 },
  );
  return page.evaluate(() => (document.querySelector("video") as HTMLVideoElement).currentTime);
}

describe.skipIf(!available)("playback in Debian's Chromium", () => {
  beforeAll(async () => {
    server = await startDevServer();
    tenant = await keyedTenant(server.baseUrl, { name: "browser" });
    ({ id: videoId } = await uploadVideo(tenant.call, await clip({ width: 640, height: 360, seconds: 3 })));
    await waitForStatus(tenant.call, videoId, ["ready"], 60);
    // A customer's page on another origin, playing the HLS with the player the API serves.
    elsewhere = await startSite(`<!doctype html>
<video controls playsinline></video>
<script src="${server.baseUrl}/vendor/hls/hls.light.min.js"></script>
<script>
  const hls = new Hls();
  hls.loadSource("${server.baseUrl}/play/${videoId}/master.m3u8");
  hls.attachMedia(document.querySelector("video"));
</script>`);
  });
  afterAll(async () => {
    await server?.stop();
    await elsewhere?.close();
  });

  it("plays the embed page with the Worker's own hls.js, nothing loaded from elsewhere", async () => {
    const browser = await launchChromium();
    try {
      const page = await browser.newPage();
      const requested: string[] = [];
      page.on("request", (request) => requested.push(request.url()));
      const response = await page.goto(`${server.baseUrl}/embed/${videoId}`, { waitUntil: "load" });
      expect(response?.status()).toBe(200);
      expect(await page.evaluate(() => Boolean((window as { player?: unknown }).player))).toBe(true);
      expect(await playsPast(page, 1)).toBeGreaterThan(1);
      // (The media source hls.js attaches is a blob: URL of the page itself.)
      expect(requested.filter((url) => !url.startsWith(server.baseUrl) && !url.startsWith("blob:"))).toEqual([]);
      expect(requested.some((url) => url.endsWith(".ts"))).toBe(true);
      // The storyboard's cues reach the player's thumbnails track (its previews on the timeline).
      const cues = await page.waitForFunction(
        () => (document.querySelector('track[label="thumbnails"]') as HTMLTrackElement).track.cues?.length ?? 0,
        null,
        { timeout: 10_000 },
      );
      expect(await cues.jsonValue()).toBe(1);
      const sprite = await page.evaluate(async () => {
        const element = document.querySelector('track[label="thumbnails"]') as HTMLTrackElement;
        const text = (element.track.cues?.[0] as VTTCue | undefined)?.text ?? "";
        const image = new Image();
        image.src = new URL(text, element.src).href;
        await image.decode();
        return { text, width: image.naturalWidth, height: image.naturalHeight };
      });
      expect(sprite).toEqual({ text: "storyboard.jpg#xywh=0,0,240,136", width: 240, height: 136 });
    } finally {
      await browser.close();
    }
  });

  it("plays the HLS from a page on another origin (CORS *)", async () => {
    const browser = await launchChromium();
    try {
      const page = await browser.newPage();
      const failed: string[] = [];
      page.on("requestfailed", (request) => failed.push(request.url()));
      await page.goto(elsewhere.origin, { waitUntil: "load" });
      expect(await playsPast(page, 1)).toBeGreaterThan(1);
      expect(failed).toEqual([]);
    } finally {
      await browser.close();
    }
  });

  it("shows a private video's refusal as a page, and plays it through a token", async () => {
    expect((await tenant.call("PATCH", `/v1/videos/${videoId}`, { visibility: "private" })).status).toBe(200);
    const browser = await launchChromium();
    try {
      const page = await browser.newPage();
      const refused = await page.goto(`${server.baseUrl}/embed/${videoId}`);
      expect(refused?.status()).toBe(403);
      expect(await page.textContent("body")).toContain("private");
      const minted = await tenant.call("POST", `/v1/videos/${videoId}/playback-tokens`, {});
      const played = await page.goto(`${server.baseUrl}/embed/${minted.json.token}`);
      expect(played?.status()).toBe(200);
      expect(await playsPast(page, 1)).toBeGreaterThan(1);
    } finally {
      await browser.close();
    }
  });

  it("plays and seeks the embed page of a video still processing, its segments made as they are asked for", async () => {
    // Five minutes of 720p: far from ready when the page plays it and seeks near its end.
    const { video } = await uploadFile(tenant.call, await longClip({ width: 1280, height: 720, seconds: 300 }));
    const playable = await waitForPlayable(tenant.call, video.id);
    expect(playable.status).toBe("processing");
    const browser = await launchChromium();
    try {
      const page = await browser.newPage();
      const segments: { url: string; status: number }[] = [];
      page.on("response", (response) => {
        if (response.url().endsWith(".ts")) segments.push({ url: response.url(), status: response.status() });
      });
      const response = await page.goto(`${server.baseUrl}/embed/${video.id}`, { waitUntil: "load" });
      expect(response?.status()).toBe(200);
      expect(await playsPast(page, 1)).toBeGreaterThan(1);

      // Seek to 250 s: the segments there are made when the player asks for them.
      await page.evaluate(() => {
        (document.querySelector("video") as HTMLVideoElement).currentTime = 250;
      });
      await page.waitForFunction(() => (document.querySelector("video") as HTMLVideoElement).currentTime > 251, null, {
        timeout: 45_000,
      });
      expect((await tenant.call("GET", `/v1/videos/${video.id}`)).json.status).toBe("processing");
      expect(segments.some((segment) => /seg_0006[0-9]\.ts$/.test(segment.url) && segment.status === 200)).toBe(true);
    } finally {
      await browser.close();
    }
  }, 180_000);
});
