import { mkdirSync } from "node:fs";
import path from "node:path";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launchChromium, requireChromium } from "./chromium.ts";
import { type DevServer, startDevServer } from "./server.ts";

/**
 * The reference page in a real headless Chromium (Debian's, driven by playwright-core). CI installs
 * Chromium and sets REQUIRE_CHROMIUM=1, which makes this test mandatory; elsewhere it is skipped
 * with a note when no Chromium is found.
 */
const available = requireChromium("the /docs browser test");

/** Operations of the specification, where the page puts them, and what their section must show. */
const SPEC_OPERATIONS = [
  {
    anchor: "tag/videos/POST/v1/videos/bulk",
    path: "/v1/videos/bulk",
    shows: ["action", "videoIds", "invalid_body", "rate_limited", "Auth:"],
  },
  {
    anchor: "tag/thumbnails/PUT/v1/videos/{id}/thumbnail",
    path: "/v1/videos/{id}/thumbnail",
    shows: ["image/jpeg", "binary", "invalid_image", "unsupported_media_type", "payload_too_large", "Auth:"],
  },
  {
    anchor: "tag/webhooks/GET/v1/projects/{projectId}/webhook-endpoints/{id}/deliveries",
    path: "/v1/projects/{projectId}/webhook-endpoints/{id}/deliveries",
    shows: ["cursor", "state", "invalid_state", "Auth:"],
  },
  {
    anchor: "tag/encoding-settings/PATCH/v1/projects/{projectId}/encoding-settings",
    path: "/v1/projects/{projectId}/encoding-settings",
    shows: ["enabledResolutions", "watermark", "if-match", "codec_unavailable", "Auth:"],
  },
  {
    anchor: "tag/projects/POST/v1/projects",
    path: "/v1/projects",
    shows: ["name", "invalid_name", "account_not_approved", "Auth:"],
  },
];

const OUT = path.resolve(import.meta.dirname, "../../.vitest");

let server: DevServer;

describe.skipIf(!available)("the /docs reference page in Chromium", () => {
  beforeAll(async () => {
    server = await startDevServer();
  });
  afterAll(async () => {
    await server?.stop();
  });

  /**
   * Opens /docs at `hash` in a fresh browser, with every request recorded and every one to another
   * origin refused (so a leak fails here rather than waiting on a network the test has not).
   */
  async function withPage(
    viewport: { width: number; height: number },
    hash: string,
    use: (page: Page, requested: string[]) => Promise<void>,
  ) {
    const browser = await launchChromium();
    try {
      const page = await browser.newPage({ viewport });
      const requested: string[] = [];
      await page.route("**/*", (route) => {
        const url = route.request().url();
        requested.push(url);
        return url.startsWith(`${server.baseUrl}/`) ? route.continue() : route.abort();
      });
      const response = await page.goto(`${server.baseUrl}/docs${hash}`, { waitUntil: "networkidle" });
      expect(response?.status()).toBe(200);
      await page.getByRole("heading", { name: "Video hosting API", level: 1 }).waitFor();
      await use(page, requested);
      // Nothing but this origin: no script, style, font, image or telemetry from anywhere else.
      expect(requested.filter((url) => !url.startsWith(`${server.baseUrl}/`))).toEqual([]);
      expect(requested).toEqual(
        expect.arrayContaining([
          `${server.baseUrl}/docs${hash}`.replace(/#.*/, ""),
          `${server.baseUrl}/vendor/scalar/api-reference.js`,
          `${server.baseUrl}/v1/openapi.json`,
        ]),
      );
    } finally {
      await browser.close();
    }
  }

  it("shows the five specification operations with their fields, auth and errors, and a code sample", async () => {
    for (const operation of SPEC_OPERATIONS) {
      await withPage({ width: 1280, height: 900 }, `#${operation.anchor}`, async (page) => {
        const section = page.locator(`[id$="${operation.anchor}"]`).first();
        await section.waitFor();
        const text = (await section.textContent()) ?? "";
        expect(text, operation.anchor).toContain(operation.path);
        for (const shown of operation.shows) expect(text, `${operation.anchor}: ${shown}`).toContain(shown);
        // The request sample, in the shell by default: the operation's own path, with curl.
        const sample = section.locator("pre code").filter({ hasText: "curl" }).first();
        const code = (await sample.textContent()) ?? "";
        expect(code).toContain(`${server.baseUrl}${operation.path.split("{")[0]}`);
        expect(code).toMatch(/--request (GET|POST|PUT|PATCH|DELETE)|curl '/);
      });
    }
  });

  it("finds the bulk operation with its search, and shows its curl sample with a generated body", async () => {
    await withPage({ width: 1280, height: 900 }, "", async (page) => {
      await page
        .getByRole("button", { name: /search/i })
        .first()
        .click();
      await page.keyboard.type("bulk");
      const dialog = page.getByRole("dialog");
      await expect
        .poll(async () => (await dialog.textContent()) ?? "", { timeout: 10_000 })
        .toContain("/v1/videos/bulk");
      await dialog.getByText("/v1/videos/bulk").first().click();
      await expect.poll(() => page.url()).toContain("#");
      const section = page.locator('[id$="tag/videos/POST/v1/videos/bulk"]').first();
      const code = section.locator("pre code").filter({ hasText: "curl" }).first();
      await code.waitFor({ timeout: 10_000 });
      const sample = (await code.textContent()) ?? "";
      expect(sample).toContain("--request POST");
      expect(sample).toContain('"action": "delete"');
      mkdirSync(OUT, { recursive: true });
      await page.screenshot({ path: path.join(OUT, "docs.png") });
    });
  });

  it("lists every error code and explains test mode in the introduction, and shows how to verify a webhook", async () => {
    await withPage({ width: 1280, height: 900 }, "#tag/webhooks", async (page) => {
      const introduction = (await page.locator('[id$="description/introduction"]').first().textContent()) ?? "";
      for (const code of ["video_not_found", "rate_limited", "idempotency_key_reused", "internal_error"])
        expect(introduction).toContain(code);
      for (const words of ["Test mode", "livemode", "?mode=test", "Moving from test to live."])
        expect(introduction).toContain(words);
      const webhooks = page.locator('[id$="tag/webhooks"]').first();
      await expect.poll(async () => (await webhooks.textContent()) ?? "").toContain("standardwebhooks");
      expect(await webhooks.textContent()).toContain("webhook-signature");
    });
  });

  it("fits a 390 px wide phone without horizontal scrolling", async () => {
    await withPage({ width: 390, height: 844 }, "#tag/videos/POST/v1/videos/bulk", async (page) => {
      await page.locator('[id$="tag/videos/POST/v1/videos/bulk"]').first().waitFor();
      const widths = await page.evaluate(() => ({
        viewport: window.innerWidth,
        document: document.documentElement.scrollWidth,
        body: document.body.scrollWidth,
      }));
      expect(widths.viewport).toBe(390);
      expect(widths.document).toBeLessThanOrEqual(widths.viewport);
      expect(widths.body).toBeLessThanOrEqual(widths.viewport);
      mkdirSync(OUT, { recursive: true });
      const screenshot = path.join(OUT, "docs-390.png");
      await page.screenshot({ path: screenshot });
      console.log(`/docs at 390 px: ${screenshot}`);
    });
  });
});
