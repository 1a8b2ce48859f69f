import { readFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launchChromium, requireChromium, startSite } from "./chromium.ts";
import { keyedTenant } from "./client.ts";
import { clip as makeClip, waitForStatus } from "./media.ts";
import { type DevServer, startDevServer } from "./server.ts";
import { sha256, storedSource } from "./tus-support.ts";

/**
 * A browser page on another origin uploads a clip straight to the API with tus-js-client's browser
 * bundle, through the upload URL's CORS (docs/api-guide.md#direct-uploads-from-a-browser-tus), and
 * the clip then plays: it goes on to encoding like any upload. Debian's Chromium, driven by
 * playwright-core.
 */
const available = requireChromium("the tus browser test");
const ROOT = path.resolve(import.meta.dirname, "../..");

const PAGE = `<!doctype html>
<meta charset="utf-8">
<title>Upload</title>
<script src="/tus.min.js"></script>
<script>
  // What a customer's page does: the URL comes from its own server, the file from the user.
  window.upload = async (endpoint) => {
    const file = new File([await (await fetch("/clip.mp4")).blob()], "clip.mp4", { type: "video/mp4" });
    return new Promise((resolve) => {
      const upload = new tus.Upload(file, {
        endpoint,
        chunkSize: 64 * 1024,
        retryDelays: [],
        metadata: { filename: file.name, filetype: file.type },
        onSuccess: () => resolve({ ok: true, url: upload.url }),
        onError: (error) => resolve({ ok: false, error: String(error) }),
      });
      upload.start();
    });
  };
</script>`;

let server: DevServer;
let site: Awaited<ReturnType<typeof startSite>>;
let clip: Uint8Array;

describe.skipIf(!available)("tus-js-client in Chromium, from a page on another origin", () => {
  beforeAll(async () => {
    clip = await makeClip({ width: 320, height: 180, seconds: 2 });
    const bundle = readFileSync(path.join(ROOT, "node_modules/tus-js-client/dist/tus.min.js"));
    site = await startSite(PAGE, { "/tus.min.js": ["text/javascript", bundle], "/clip.mp4": ["video/mp4", clip] });
    server = await startDevServer();
  });
  afterAll(async () => {
    await server?.stop();
    await site?.close();
  });

  it("uploads the clip through the URL's CORS: exactly its bytes, and the video becomes ready", async () => {
    const tenant = await keyedTenant(server.baseUrl, { name: "browser" });
    const allowed = await tenant.call("POST", "/v1/uploads", { corsOrigin: site.origin, video: { title: "clip" } });
    const refused = await tenant.call("POST", "/v1/uploads", { corsOrigin: "https://elsewhere.example" });
    expect(allowed.status).toBe(201);
    expect(new URL(allowed.json.url).origin).not.toBe(site.origin);
    const browser = await launchChromium();
    try {
      const page = await browser.newPage();
      const tusRequests: string[] = [];
      page.on("request", (request) => {
        if (request.url().includes("/tus/")) tusRequests.push(request.method());
      });
      await page.goto(`${site.origin}/`);
      const result = await page.evaluate(
        (url) => (window as unknown as { upload(u: string): Promise<unknown> }).upload(url),
        allowed.json.url as string,
      );
      expect(result).toMatchObject({ ok: true });
      // Cross-origin, with tus headers: each of these needed its preflight to pass. The clip went
      // in several PATCHes.
      expect(tusRequests[0]).toBe("POST");
      expect(tusRequests.filter((method) => method === "PATCH").length).toBeGreaterThan(1);
      // A URL minted for another origin is refused by the browser itself.
      const other = await page.evaluate(
        (url) => (window as unknown as { upload(u: string): Promise<unknown> }).upload(url),
        refused.json.url as string,
      );
      expect(other).toMatchObject({ ok: false });
    } finally {
      await browser.close();
    }
    const videoId = allowed.json.video.id as string;
    // Like any upload, it goes on to encoding (docs/encoding.md#what-it-promises).
    const video = await waitForStatus(tenant.call, videoId, ["ready", "errored"], 60);
    expect(video.status).toBe("ready");
    const stored = await storedSource(server.persistTo, tenant.projectId, videoId);
    expect(sha256(stored)).toBe(sha256(clip));
    const progress = await tenant.call("GET", `/v1/uploads/${allowed.json.id}`);
    expect(progress.json).toMatchObject({ status: "completed", offset: clip.length, length: clip.length });
    const refusedProgress = await tenant.call("GET", `/v1/uploads/${refused.json.id}`);
    expect(refusedProgress.json.status).toBe("waiting");
  });
});
