import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launchChromium, requireChromium } from "./chromium.ts";
import { keyedTenant } from "./client.ts";
import { pageWithCookie } from "./dashboard-support.ts";
import { clip, uploadVideo, waitForStatus } from "./media.ts";
import { type DevServer, startDevServer } from "./server.ts";

const available = requireChromium("the analytics browser test");

let server: DevServer;
let tenant: Awaited<ReturnType<typeof keyedTenant>>;
let videoId: string;

type Figures = {
  views: number;
  watchTimeSeconds: number;
  startupTimeMs: { p50: number; p95: number } | null;
  renditions: { resolution: string; share: number }[];
  series: { start: string; views: number; watchTimeSeconds: number }[];
};

describe.skipIf(!available)("viewing analytics from the embed page, in Debian's Chromium", () => {
  beforeAll(async () => {
    server = await startDevServer();
    tenant = await keyedTenant(server.baseUrl, { name: "analytics" });
    ({ id: videoId } = await uploadVideo(tenant.call, await clip({ width: 640, height: 360, seconds: 6 })));
    await waitForStatus(tenant.call, videoId, ["ready"], 60);
  });
  afterAll(async () => {
    await server?.stop();
  });

  it("sends start and end as the page plays and goes away; the view is in the video's figures within 60 s", async () => {
    const browser = await launchChromium();
    const beacons: { event: string; watchedMs: number; startupMs?: number; rendition?: string }[] = [];
    try {
      const context = await browser.newContext();
      const page = await context.newPage();
      context.on("request", (request) => {
        if (request.method() === "POST" && request.url().endsWith(`/play/${videoId}/beacons`)) {
          beacons.push(JSON.parse(request.postData() ?? "{}"));
        }
      });
      const statuses: number[] = [];
      context.on("response", (response) => {
        if (response.url().endsWith("/beacons")) statuses.push(response.status());
      });
      expect((await page.goto(`${server.baseUrl}/embed/${videoId}`, { waitUntil: "load" }))?.status()).toBe(200);
      await page.waitForSelector("video[data-beacons]");
      await page.evaluate(() => {
        const video = document.querySelector("video") as HTMLVideoElement;
        video.muted = true;
        return video.play();
      });
      await page.waitForFunction(() => (document.querySelector("video") as HTMLVideoElement).currentTime > 2, null, {
        timeout: 20_000,
      });
      // Leaving the page fires pagehide: the end beacon goes with navigator.sendBeacon.
      await page.goto("about:blank");
      await new Promise((resolve) => setTimeout(resolve, 1000));
      // The page's start, seen by the browser; its end (sendBeacon, while the page goes away) is
      // seen below by its effect: only it carries watch time and the startup.
      expect(beacons[0]).toMatchObject({ event: "start", watchedMs: 0 });
      expect(statuses.every((status) => status === 204)).toBe(true);
      const end = beacons.find((b) => b.event === "end");
      if (end) expect(end).toMatchObject({ rendition: "360p" });
    } finally {
      await browser.close();
    }

    const deadline = Date.now() + 60_000;
    let figures: Figures | undefined;
    while (Date.now() < deadline) {
      const answer = await tenant.call("GET", `/v1/videos/${videoId}/analytics?interval=hour`);
      expect(answer.status).toBe(200);
      figures = answer.json as Figures;
      if (figures.views > 0) break;
      await new Promise((resolve) => setTimeout(resolve, 1000));
    }
    expect(figures?.views).toBe(1);
    expect(figures?.watchTimeSeconds).toBeGreaterThan(1.5);
    expect(figures?.startupTimeMs).not.toBeNull();
    expect(figures?.renditions).toEqual([{ resolution: "360p", share: 1 }]);
    const project = await tenant.call("GET", "/v1/analytics");
    expect(project.json).toMatchObject({ views: 1, topVideos: [{ videoId, views: 1 }] });
  });

  it("is read once by the dashboard's analytics view and by the video's page, not again on each render", async () => {
    const browser = await launchChromium();
    try {
      const page = await pageWithCookie(browser, server.baseUrl, tenant.owner.cookie);
      const asked: string[] = [];
      page.on("request", (request) => {
        const { pathname } = new URL(request.url());
        if (pathname.startsWith("/v1/") && pathname.endsWith("/analytics")) asked.push(pathname);
      });
      for (const [view, read] of [
        [`/dashboard/projects/${tenant.projectId}/analytics`, "/v1/analytics"],
        [`/dashboard/projects/${tenant.projectId}/videos/${videoId}`, `/v1/videos/${videoId}/analytics`],
      ]) {
        asked.length = 0;
        await page.goto(`${server.baseUrl}${view}`);
        await page.getByText("Views with an error").waitFor();
        // The figures are shown: a view that read them again on each render (it did, about 50
        // times a second) would have asked dozens of times more by the end of this.
        await new Promise((resolve) => setTimeout(resolve, 2000));
        expect(asked, view).toEqual([read]);
      }
    } finally {
      await browser.close();
    }
  });
});
