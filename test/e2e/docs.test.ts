import { existsSync, mkdirSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type DevServer, startDevServer } from "./server.ts";

/**
 * The reference page in a real headless Chromium (Debian's, driven by playwright-core). CI installs
 * Chromium and sets REQUIRE_CHROMIUM=1, which makes this test mandatory; elsewhere it is skipped
 * with a note when no Chromium is found.
 */
const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
const available = existsSync(CHROMIUM);
const required = process.env.REQUIRE_CHROMIUM === "1";
if (!available) {
  const how = "install it (apt-get install -y chromium) or set CHROMIUM_PATH";
  if (required) throw new Error(`REQUIRE_CHROMIUM=1 but no Chromium at ${CHROMIUM}: ${how}`);
  console.warn(`Skipping the /docs browser test: no Chromium at ${CHROMIUM}; ${how} to run it.`);
}

const SPEC_OPERATIONS = [
  { id: "bulkVideos", path: "/v1/videos/bulk", fields: ["action", "videoIds", "visibility", "results[].ok"] },
  { id: "setThumbnail", path: "/v1/videos/{id}/thumbnail", fields: ["thumbnailUrl", "invalid_image"] },
  {
    id: "listWebhookDeliveries",
    path: "/v1/projects/{projectId}/webhook-endpoints/{id}/deliveries",
    fields: ["nextCursor", "data[].state", "invalid_state"],
  },
  {
    id: "patchEncodingSettings",
    path: "/v1/projects/{projectId}/encoding-settings",
    fields: ["enabledResolutions", "watermark.opacity", "codec_unavailable"],
  },
  { id: "createProject", path: "/v1/projects", fields: ["name", "invalid_name", "account_not_approved"] },
];

let server: DevServer;

describe.skipIf(!available)("the /docs reference page in Chromium", () => {
  beforeAll(async () => {
    server = await startDevServer();
  });
  afterAll(async () => {
    await server?.stop();
  });

  it("renders the five specification operations with their fields, auth and errors, offline", async () => {
    const { chromium } = await import("playwright-core");
    const browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
      ],
    });
    try {
      const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
      const requested: string[] = [];
      page.on("request", (request) => requested.push(request.url()));
      const response = await page.goto(`${server.baseUrl}/docs`, { waitUntil: "load" });
      expect(response?.status()).toBe(200);
      // Nothing but the page itself: no script, style or font from anywhere.
      expect(requested).toEqual([`${server.baseUrl}/docs`]);
      for (const operation of SPEC_OPERATIONS) {
        const section = page.locator(`section#${operation.id}`);
        await expect(section.locator("h3").textContent()).resolves.toContain(operation.path);
        const text = (await section.textContent()) ?? "";
        for (const field of operation.fields) expect(text, `${operation.id}: ${field}`).toContain(field);
        expect(text).toMatch(/Auth:/);
      }
      const nav = ((await page.locator("nav").textContent()) ?? "").toLowerCase();
      for (const tag of ["videos", "thumbnails", "webhooks", "encoding settings", "projects"])
        expect(nav).toContain(tag);
      const webhooks = await page.locator("#webhooks").evaluate((node) => node.parentElement?.textContent ?? "");
      expect(webhooks).toContain("webhook-signature");
      expect(webhooks).toContain("standardwebhooks");
      await page.locator("#bulkVideos").scrollIntoViewIfNeeded();
      const out = path.resolve(import.meta.dirname, "../../.vitest");
      mkdirSync(out, { recursive: true });
      await page.screenshot({ path: path.join(out, "docs.png") });
      await page.screenshot({ path: path.join(out, "docs-full.png"), fullPage: true });
    } finally {
      await browser.close();
    }
  });
});
