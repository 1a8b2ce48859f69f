import { randomBytes } from "node:crypto";
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launchChromium, requireChromium } from "./chromium.ts";
import { horizontalOverflow, seriousViolations, tabTo } from "./dashboard-support.ts";
import { clip as makeClip } from "./media.ts";
import { startReceiver } from "./receiver.ts";
import { type DevServer, E2E_ADMIN_TOKEN, startDevServer } from "./server.ts";

/**
 * The dashboard (docs/dashboard.md) as a person uses it, in Debian's Chromium against a real
 * `wrangler dev` with the real encoder: every step found by its accessible name, axe-core on every
 * view, a 360 px phone, the keyboard alone for an upload and a bulk delete. It writes the
 * screenshots docs/dashboard.md shows.
 */
const available = requireChromium("the dashboard test");
const ROOT = path.resolve(import.meta.dirname, "../..");
// The README's pictures: `DASHBOARD_SCREENSHOTS=docs npx vitest run --project e2e test/e2e/dashboard.test.ts`
// writes them into docs/ (committed); an ordinary run writes them into .vitest/, so the tests never
// leave a clone changed.
const DOCS = path.join(ROOT, process.env.DASHBOARD_SCREENSHOTS === "docs" ? "docs" : ".vitest");
const THUMBNAIL = readFileSync(path.join(ROOT, "test/fixtures/images/baseline.jpg"));
const CAPTIONS = "WEBVTT\n\n00:00:00.000 --> 00:00:02.000\nHello from the dashboard\n";
const EMAIL = `dash-${Date.now()}@example.com`;
const PASSWORD = "a dashboard password";

let server: DevServer;
let browser: Browser;
let context: BrowserContext;
let page: Page;
let clip: Uint8Array;
let projectUrl = "";
const cspViolations: string[] = [];
const checked: string[] = [];

/** axe on the view as it is now, no serious or critical violation; and `Log out` and `Account` where signed in. */
async function checkView(name: string, options: { signedIn?: boolean } = {}) {
  expect(await seriousViolations(page), name).toEqual([]);
  if (options.signedIn !== false) {
    await expect(page.getByRole("button", { name: "Log out" }).isVisible()).resolves.toBe(true);
    await expect(page.getByRole("link", { name: "Account", exact: true }).isVisible()).resolves.toBe(true);
  }
  checked.push(name);
}

async function rowStatus(title: string): Promise<string> {
  const cell = page.getByRole("row", { name: new RegExp(title) }).locator("td[data-label=Status]");
  return ((await cell.textContent()) ?? "").trim();
}

async function clipboard(): Promise<string> {
  return page.evaluate(() => navigator.clipboard.readText());
}

describe.skipIf(!available)("the dashboard in Chromium", () => {
  beforeAll(async () => {
    mkdirSync(DOCS, { recursive: true });
    clip = await makeClip({ width: 320, height: 180, seconds: 3, audio: true });
    server = await startDevServer();
    browser = await launchChromium();
    context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    await context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: server.baseUrl });
    page = await context.newPage();
    page.on("console", (message) => {
      if (message.text().includes("Content Security Policy")) cspViolations.push(message.text());
    });
  });
  afterAll(async () => {
    await browser?.close();
    await server?.stop();
  });

  it("signs up, waits for approval, is approved in /dashboard/operator, logs in and creates a project", async () => {
    const started = Date.now();
    await page.goto(`${server.baseUrl}/`);
    expect(new URL(page.url()).pathname).toBe("/dashboard");
    await page.getByRole("button", { name: "Log in" }).waitFor();
    console.log(`dashboard: navigation to the sign-in form usable in ${Date.now() - started} ms`);
    await checkView("signed out", { signedIn: false });

    // An error in words next to its field; what was typed stays.
    await page.getByLabel("Email").fill(EMAIL);
    await page.getByLabel("Password").fill("short");
    await page.getByRole("button", { name: "Sign up" }).click();
    await expect(
      page
        .getByText(/at least 10|>=10|too small/i)
        .first()
        .isVisible(),
    ).resolves.toBe(true);
    expect(await page.getByLabel("Email").inputValue()).toBe(EMAIL);

    await page.getByLabel("Password").fill(PASSWORD);
    await page.getByRole("button", { name: "Sign up" }).click();
    await page
      .getByText(/approval/)
      .first()
      .waitFor();
    await page.getByRole("button", { name: "Log in" }).click();
    await page.getByRole("heading", { name: "Waiting for approval" }).waitFor();
    expect(await page.getByText(/approval by an operator/).isVisible()).toBe(true);
    await checkView("waiting for approval");

    // The operator, in another tab: the token is kept in the tab's memory only.
    const operator = await context.newPage();
    await operator.goto(`${server.baseUrl}/dashboard/operator`);
    await operator.getByLabel("Operator token").fill(E2E_ADMIN_TOKEN);
    await operator.getByRole("button", { name: "Show accounts" }).click();
    const row = operator.getByRole("row", { name: new RegExp(EMAIL) });
    await row.waitFor();
    expect(await operator.getByRole("heading", { name: "Waiting for approval" }).isVisible()).toBe(true);
    const stored = await operator.evaluate(() =>
      JSON.stringify([{ ...localStorage }, { ...sessionStorage }, document.cookie]),
    );
    expect(stored).not.toContain(E2E_ADMIN_TOKEN);
    expect(JSON.stringify(await context.cookies())).not.toContain(E2E_ADMIN_TOKEN);
    expect(await seriousViolations(operator)).toEqual([]);
    await row.getByRole("button", { name: "Approve" }).click();
    await operator.getByText(`${EMAIL}: approved.`).waitFor();
    await operator.close();

    await page.getByRole("button", { name: "Check again" }).click();
    await page.getByRole("heading", { name: "Projects" }).waitFor();
    await checkView("projects");
    await page.getByRole("button", { name: "New project" }).click();
    await page.getByRole("button", { name: "Create project" }).click();
    await page.locator(".field .error").first().waitFor();
    await page.getByLabel("Project name").fill("Demo project");
    await page.getByRole("button", { name: "Create project" }).click();
    await page.getByRole("heading", { name: "Videos" }).waitFor();
    projectUrl = page.url();
    await page.getByText("Demo project", { exact: true }).waitFor();
    for (const name of ["Videos", "API keys", "Webhooks", "Encoding settings"]) {
      expect(await page.getByRole("link", { name, exact: true }).isVisible(), name).toBe(true);
    }
    await checkView("videos (empty)");
  });

  it("switches test mode on, with its banner, and off", async () => {
    const toggle = page.getByRole("switch", { name: "Test mode" });
    await toggle.check();
    await page.getByText(/Test mode: the lists show test objects only/).waitFor();
    await checkView("videos in test mode");
    await toggle.uncheck();
    await page.getByText(/Test mode: the lists/).waitFor({ state: "detached" });
  });

  it("uploads over tus with a progress bar to 100, and the status turns ready without a reload", async () => {
    await page
      .getByLabel("Upload video")
      .setInputFiles({ name: "first-clip.mp4", mimeType: "video/mp4", buffer: Buffer.from(clip) });
    const bar = page.getByRole("progressbar", { name: "Uploading first-clip.mp4" });
    await bar.waitFor();
    await page.waitForFunction(
      () =>
        (document.querySelector('progress[aria-label="Uploading first-clip.mp4"]') as HTMLProgressElement | null)
          ?.value === 100,
      null,
      { timeout: 30_000 },
    );
    await page.getByRole("link", { name: "first-clip", exact: true }).waitFor({ timeout: 10_000 });
    await page.waitForFunction(
      () => document.querySelector("td[data-label=Status]")?.textContent?.trim() === "ready",
      null,
      { timeout: 90_000, polling: 250 },
    );
    expect(await rowStatus("first-clip")).toBe("ready");

    // The keyboard alone: Tab to the file input, Space opens the chooser.
    const chooser = page.waitForEvent("filechooser");
    await tabTo(page, page.getByLabel("Upload video"));
    await page.keyboard.press("Space");
    await (await chooser).setFiles({ name: "second-clip.mp4", mimeType: "video/mp4", buffer: Buffer.from(clip) });
    await page.waitForFunction(
      () =>
        (document.querySelector('progress[aria-label="Uploading second-clip.mp4"]') as HTMLProgressElement | null)
          ?.value === 100,
      null,
      { timeout: 30_000 },
    );
    await page.getByRole("link", { name: "second-clip", exact: true }).waitFor({ timeout: 10_000 });
    await checkView("videos with uploads");
  }, 180_000);

  it("runs a bulk action with each item's result", async () => {
    await page.getByRole("checkbox", { name: "first-clip", exact: true }).check();
    await page.getByRole("checkbox", { name: "second-clip", exact: true }).check();
    await page.getByRole("button", { name: "Make unlisted" }).click();
    await page.getByText("first-clip: Made unlisted").waitFor();
    await page.getByText("second-clip: Made unlisted").waitFor();
    await page.waitForFunction(() =>
      Array.from(document.querySelectorAll("td[data-label=Visibility]")).every(
        (cell) => cell.textContent === "unlisted",
      ),
    );
    await page.getByRole("checkbox", { name: "first-clip", exact: true }).uncheck();
    await page.getByRole("checkbox", { name: "second-clip", exact: true }).uncheck();
    await page.waitForFunction(
      () => document.querySelector("td[data-label=Status]")?.textContent?.trim() === "ready",
      null,
      {
        timeout: 90_000,
      },
    );
    await page.screenshot({ path: path.join(DOCS, "dashboard-videos.png") });
  }, 120_000);

  it("edits a video on its page: title, visibility, thumbnail, captions, embed code, playback link", async () => {
    await page.getByRole("link", { name: "first-clip", exact: true }).click();
    await page.getByRole("heading", { name: "first-clip" }).waitFor();
    await page.locator("iframe.player").waitFor();
    expect(await page.locator("iframe.player").getAttribute("src")).toContain("/embed/");
    expect(await page.getByText("Renditions", { exact: true }).isVisible()).toBe(true);
    await checkView("video");

    await page.getByLabel("Title").fill("Renamed clip");
    await page.getByRole("button", { name: "Save", exact: true }).click();
    await page.getByRole("heading", { name: "Renamed clip" }).waitFor();
    await page.getByLabel("Visibility").selectOption("public");
    await page.getByText("Visibility saved.").waitFor();

    await page
      .getByLabel("Custom thumbnail")
      .setInputFiles({ name: "poster.jpg", mimeType: "image/jpeg", buffer: THUMBNAIL });
    await page.getByText("Custom thumbnail saved.").waitFor();
    await page.getByText("Now: a custom image.").waitFor();
    await page.getByRole("button", { name: "Remove custom thumbnail" }).click();
    await page.getByText("Now: the automatic poster frame.").waitFor();

    await page
      .getByLabel("Captions")
      .setInputFiles({ name: "en.vtt", mimeType: "text/vtt", buffer: Buffer.from(CAPTIONS) });
    // The field of an upload's language; the choice of a generated track's language is a combobox.
    await page.getByRole("textbox", { name: "Language" }).fill("en");
    await page.getByRole("button", { name: "Add captions" }).click();
    const track = page.getByRole("row", { name: /English/ });
    await track.waitFor();
    await track.getByRole("button", { name: "Delete" }).click();
    await track.waitFor({ state: "detached" });

    await page.getByRole("button", { name: "Copy embed code" }).click();
    await page.getByText("Embed code copied.").waitFor();
    const code = await clipboard();
    expect(code).toMatch(/^<iframe src="http:\/\/127\.0\.0\.1:\d+\/embed\/[0-9A-Z]{26}"/);

    await page.getByRole("button", { name: "Create playback link" }).click();
    const link = await page.getByLabel("Playback link").inputValue();
    expect(link).toMatch(/\/play\/[^/]+\/.*\.m3u8$/);
    expect((await fetch(link)).status).toBe(200);
    await page.screenshot({ path: path.join(DOCS, "dashboard-video.png"), fullPage: true });
  }, 60_000);

  it("edits a video's chapters: a refused list keeps what was typed and says why; saved ones stay after a reload", async () => {
    const chapters = page.getByRole("region", { name: "Chapters" });
    await chapters.getByText("No chapters yet.", { exact: false }).waitFor();
    await chapters.getByRole("button", { name: "Add chapter" }).click();
    await chapters.getByRole("button", { name: "Add chapter" }).click();
    const first = chapters.getByRole("group", { name: "Chapter 1" });
    const second = chapters.getByRole("group", { name: "Chapter 2" });
    expect(await first.getByLabel("Start").inputValue()).toBe("0");
    await first.getByLabel("Title").fill("Opening");
    // A second chapter at 0 too: the API refuses the list, and says so next to that start.
    await second.getByLabel("Start").fill("0");
    await second.getByLabel("Title").fill("The middle");
    await chapters.getByRole("button", { name: "Save chapters" }).click();
    await second.getByText("must be after the chapter before it (0 s)").waitFor();
    expect(await second.getByLabel("Title").inputValue()).toBe("The middle");
    await checkView("video chapters refused");

    await second.getByLabel("Start").fill("0:01.5");
    await chapters.getByRole("button", { name: "Save chapters" }).click();
    await chapters.getByText("Chapters saved.").waitFor();
    await page.reload();
    await second.getByLabel("Title").waitFor();
    const rows = await chapters
      .getByRole("group")
      .evaluateAll((groups) =>
        groups.map((group) => Array.from(group.querySelectorAll("input")).map((input) => input.value)),
      );
    expect(rows).toEqual([
      ["0", "Opening"],
      ["1.5", "The middle"],
    ]);
    await checkView("video chapters");
  });

  it("plays, on the video's page, a video whose allowedOrigins leave the dashboard's origin out", async () => {
    const projectId = new URL(projectUrl).pathname.split("/")[3];
    const videos = `${server.baseUrl}/v1/videos?projectId=${projectId}`;
    const { data } = (await (await page.request.get(`${videos}&status=ready`)).json()) as { data: { id: string }[] };
    const videoId = data[0]?.id ?? "";
    const restricted = await page.request.patch(`${server.baseUrl}/v1/videos/${videoId}?projectId=${projectId}`, {
      data: { allowedOrigins: ["https://customer.example"] },
    });
    expect(restricted.status()).toBe(200);
    await page.goto(`${projectUrl}/videos/${videoId}`);
    await page.locator("iframe.player").waitFor();
    // The embed page loads in the frame (its frame-ancestors names this origin) and its player plays.
    const embed = page.frameLocator("iframe.player");
    await embed.locator("media-controller").waitFor({ timeout: 15_000 });
    await embed.locator("video[slot=media]").evaluate((video: HTMLVideoElement) => {
      video.muted = true;
      return video.play();
    });
    await expect
      .poll(() => embed.locator("video[slot=media]").evaluate((video: HTMLVideoElement) => video.currentTime), {
        timeout: 20_000,
      })
      .toBeGreaterThan(1);
  });

  it("creates an API key shown once, copies and revokes it", async () => {
    await page.getByRole("link", { name: "API keys", exact: true }).click();
    await page.getByRole("heading", { name: "API keys" }).waitFor();
    await page.getByRole("button", { name: "Create API key" }).click();
    await page.getByLabel("Key name").fill("ci server");
    await page.getByRole("checkbox", { name: "write" }).uncheck();
    await page.getByRole("radio", { name: "Test" }).check();
    await page.getByRole("button", { name: "Create key" }).click();
    const field = page.getByRole("textbox", { name: "API key" });
    await field.waitFor();
    const key = await field.inputValue();
    expect(key).toMatch(/^svc_test_/);
    expect(await field.getAttribute("readonly")).not.toBeNull();
    await page.getByRole("button", { name: "Copy", exact: true }).click();
    expect(await clipboard()).toBe(key);
    await checkView("API keys");
    const asKey = () => fetch(`${server.baseUrl}/v1/videos`, { headers: { authorization: `Bearer ${key}` } });
    expect((await asKey()).status).toBe(200);
    await page.getByRole("button", { name: "Done" }).click();
    expect(await page.content()).not.toContain(key);

    await page
      .getByRole("row", { name: /ci server/ })
      .getByRole("button", { name: "Revoke" })
      .click();
    await page.getByRole("dialog").getByRole("button", { name: "Revoke" }).click();
    await page.getByText("No API keys yet.").waitFor();
    expect((await asKey()).status).toBe(401);
  });

  it("manages a webhook endpoint and its deliveries, and deletes videos in bulk with the keyboard alone", async () => {
    const receiver = await startReceiver(500);
    try {
      await page.getByRole("link", { name: "Webhooks", exact: true }).click();
      await page.getByRole("heading", { name: "Webhooks" }).waitFor();
      await page.getByRole("button", { name: "Add endpoint" }).click();
      await page.getByLabel("Endpoint URL").fill("not a url");
      await page.getByRole("button", { name: "Create endpoint" }).click();
      await page.locator(".field .error").first().waitFor();
      expect(await page.getByLabel("Endpoint URL").inputValue()).toBe("not a url");
      await page.getByLabel("Endpoint URL").fill(receiver.url());
      await page.getByRole("checkbox", { name: "video.ready" }).uncheck();
      await page.getByRole("button", { name: "Create endpoint" }).click();
      const secret = await page.getByLabel("Signing secret").inputValue();
      expect(secret).toMatch(/^whsec_/);
      await page.getByRole("button", { name: "Done" }).click();
      await page.getByRole("button", { name: "Rotate secret" }).click();
      await page.getByLabel("Signing secret").waitFor();
      const rotated = await page.getByLabel("Signing secret").inputValue();
      expect(rotated).toMatch(/^whsec_/);
      expect(rotated).not.toBe(secret);
      await page.getByRole("button", { name: "Done" }).click();
      await page.getByRole("button", { name: "Disable" }).click();
      await page.getByRole("button", { name: "Enable" }).click();
      await page.getByRole("button", { name: "Disable" }).waitFor();
      await checkView("webhooks");

      // A bulk delete, the keyboard alone: Tab to the row's checkbox, Space; Tab to the button,
      // Enter; the dialog's Delete has the focus, Enter.
      await page.getByRole("link", { name: "Videos", exact: true }).click();
      const box = page.getByRole("checkbox", { name: "second-clip", exact: true });
      await box.waitFor();
      await page.locator("body").focus();
      await tabTo(page, box);
      await page.keyboard.press("Space");
      expect(await box.isChecked()).toBe(true);
      await page.keyboard.down("Shift");
      await tabTo(page, page.getByRole("button", { name: "Delete selected" }));
      await page.keyboard.up("Shift");
      await page.keyboard.press("Enter");
      const dialog = page.getByRole("dialog");
      await dialog.waitFor();
      await checkView("delete dialog");
      expect(await dialog.getByRole("button", { name: "Delete" }).evaluate((b) => b === document.activeElement)).toBe(
        true,
      );
      await page.keyboard.press("Enter");
      await page.getByText("second-clip: Deleted").waitFor();
      await page.getByRole("link", { name: "second-clip", exact: true }).waitFor({ state: "detached" });

      // Its video.deleted went to the endpoint, which answered 500: a failed attempt to retry.
      await expect.poll(() => receiver.received.length, { timeout: 20_000 }).toBeGreaterThan(0);
      await page.getByRole("link", { name: "Webhooks", exact: true }).click();
      await page.getByRole("link", { name: "Deliveries" }).click();
      await page.getByRole("heading", { name: "Deliveries" }).waitFor();
      await page.getByLabel("State").selectOption("failed");
      await page.getByLabel("Event type").selectOption("video.deleted");
      const failed = page.locator("tbody tr", { hasText: "failed" }).filter({ hasText: "video.deleted" }).first();
      await expect
        .poll(
          async () => {
            await page.getByRole("button", { name: "Refresh" }).click();
            return failed.isVisible();
          },
          { timeout: 20_000 },
        )
        .toBe(true);
      expect(await failed.textContent()).toContain("500");
      await checkView("deliveries");
      receiver.answers.push(204);
      await failed.getByRole("button", { name: "Retry" }).click();
      await page.getByText(/A new attempt of video\.deleted was queued/).waitFor();
      await page.getByLabel("State").selectOption("succeeded");
      await expect
        .poll(
          async () => {
            await page.getByRole("button", { name: "Refresh" }).click();
            return page.getByRole("row", { name: /video\.deleted/ }).count();
          },
          { timeout: 20_000 },
        )
        .toBeGreaterThan(0);
      expect(await page.getByRole("button", { name: "Next page" }).isDisabled()).toBe(true);

      await page.getByRole("link", { name: "Back to webhooks" }).click();
      await page.getByRole("button", { name: "Delete" }).click();
      await page.getByRole("dialog").getByRole("button", { name: "Delete" }).click();
      await page.getByText("No endpoints yet.").waitFor();
    } finally {
      await receiver.close();
    }
  }, 120_000);

  it("saves encoding settings, and shows a change made elsewhere instead of overwriting it", async () => {
    await page.getByRole("link", { name: "Encoding settings", exact: true }).click();
    await page.getByRole("heading", { name: "Encoding settings" }).waitFor();
    await page.getByRole("checkbox", { name: "480p" }).check();
    await page.getByRole("button", { name: "Save settings" }).click();
    await page.getByText("Settings saved.").first().waitFor();
    await checkView("encoding settings");

    // Elsewhere (another tab, a script): MP4 fallback on.
    const projectId = new URL(projectUrl).pathname.split("/")[3];
    const elsewhere = await page.request.patch(`${server.baseUrl}/v1/projects/${projectId}/encoding-settings`, {
      data: { mp4FallbackEnabled: true },
    });
    expect(elsewhere.status()).toBe(200);
    await page.getByRole("checkbox", { name: "240p" }).check();
    await page.getByRole("button", { name: "Save settings" }).click();
    await page.getByText(/changed elsewhere/).waitFor();
    expect(await page.getByText(/Your changes were: resolutions 240p, 360p, 480p/).isVisible()).toBe(true);
    expect(await page.getByRole("checkbox", { name: "MP4 fallback" }).isChecked()).toBe(true);
    expect(await page.getByRole("checkbox", { name: "240p" }).isChecked()).toBe(false);
    const stored = await (
      await page.request.get(`${server.baseUrl}/v1/projects/${projectId}/encoding-settings`)
    ).json();
    expect(stored.enabledResolutions).toEqual(["360p", "480p", "720p", "1080p"]);
    await page.screenshot({ path: path.join(DOCS, "dashboard-settings.png"), fullPage: true });
  });

  it("shows the analytics view, and fits a 360 px phone on every view with no sideways scroll", async () => {
    await page.getByRole("link", { name: "Analytics", exact: true }).click();
    await page.getByRole("heading", { name: "Analytics" }).waitFor();
    // The project's figures from GET /v1/analytics (docs/analytics.md), written out, with both charts.
    await page.getByText("Startup time p50 / p95").waitFor();
    expect(await page.getByText("No analytics yet.").count()).toBe(0);
    await page.getByRole("img", { name: /^Views/ }).waitFor();
    await page.getByRole("img", { name: /^Watch time/ }).waitFor();
    await checkView("analytics");

    const phone = await browser.newContext({
      viewport: { width: 360, height: 780 },
      storageState: await context.storageState(),
    });
    const small = await phone.newPage();
    try {
      const base = new URL(projectUrl).pathname;
      for (const view of ["", "/api-keys", "/webhooks", "/encoding-settings", "/analytics"]) {
        await small.goto(`${server.baseUrl}${base}${view}`);
        await small.getByRole("button", { name: "Log out" }).waitFor();
        await small.getByText("Loading…").first().waitFor({ state: "detached" });
        expect(await horizontalOverflow(small), view || "videos").toBeLessThanOrEqual(0);
        if (view === "") {
          await small.getByRole("link", { name: "Renamed clip" }).waitFor();
          await small.screenshot({ path: path.join(DOCS, "dashboard-phone.png"), fullPage: true });
          await small.getByRole("link", { name: "Renamed clip" }).click();
          await small.getByRole("heading", { name: "Renamed clip" }).waitFor();
          expect(await horizontalOverflow(small), "video").toBeLessThanOrEqual(0);
        }
      }
      await small.goto(`${server.baseUrl}/dashboard/operator`);
      await small.getByLabel("Operator token").waitFor();
      expect(await horizontalOverflow(small), "operator").toBeLessThanOrEqual(0);
    } finally {
      await phone.close();
    }
  });

  it("deletes a video from its page after the dialog, and logs out", async () => {
    // Figures for docs/dashboard.md: a signed-in navigation to the videos view until its table is
    // usable, and what the open view then asks of the Worker while it sits there.
    const started = Date.now();
    await page.goto(projectUrl);
    await page.getByRole("link", { name: "Renamed clip" }).waitFor();
    const usable = Date.now() - started;
    // The view's own reads (fetch) are the polls; anything else is a one-time load, such as a row's
    // thumbnail that a slow machine has not fetched yet when the table shows, and is loaded at most once.
    const polls: string[] = [];
    const loads: string[] = [];
    const listen = (request: { url(): string; resourceType(): string }) => {
      const url = new URL(request.url());
      if (url.origin !== server.baseUrl) return;
      (["fetch", "xhr"].includes(request.resourceType()) ? polls : loads).push(url.pathname);
    };
    page.on("request", listen);
    await page.waitForTimeout(15_000);
    page.off("request", listen);
    console.log(
      `dashboard: videos view usable ${usable} ms after navigation; open for 15 s it made ${polls.length} requests (${[...new Set(polls)].join(", ")}) and loaded ${loads.length} other things (${loads.join(", ")})`,
    );
    expect(
      polls.every((path) => path === "/v1/videos"),
      polls.join(", "),
    ).toBe(true);
    expect(new Set(loads).size, loads.join(", ")).toBe(loads.length);
    expect(polls.length).toBeGreaterThanOrEqual(4);

    await page.getByRole("link", { name: "Renamed clip" }).click();
    await page.getByRole("button", { name: "Delete video" }).click();
    await page.getByRole("dialog").getByRole("button", { name: "Delete" }).click();
    await page.getByRole("heading", { name: "Videos" }).waitFor();
    await page.getByText("No videos yet.", { exact: false }).waitFor();
    await page.getByRole("button", { name: "Log out" }).click();
    await page.getByRole("button", { name: "Log in" }).waitFor();
    expect(cspViolations).toEqual([]);
    expect(checked.length).toBeGreaterThanOrEqual(12);
  });

  it("resumes an upload where it stopped when the same file is chosen again after a reload", async () => {
    await page.getByLabel("Email").fill(EMAIL);
    await page.getByLabel("Password").fill(PASSWORD);
    await page.getByRole("button", { name: "Log in" }).click();
    await page.getByRole("button", { name: "Log out" }).waitFor();
    await page.goto(projectUrl);
    await page.getByRole("heading", { name: "Videos" }).waitFor();
    // A file on disk (its modification time is the same each time it is chosen), over one tus PATCH.
    const file = path.join(mkdtempSync(path.join(tmpdir(), "dashboard-")), "long-take.mp4");
    writeFileSync(file, Buffer.concat([Buffer.from(clip), randomBytes(20 * 1024 * 1024)]));
    const offsets: string[] = [];
    let patches = 0;
    // The connection is lost after the first PATCH (16 MiB): every later one fails.
    await page.route("**/tus/**", (route) => {
      const request = route.request();
      if (request.method() !== "PATCH") return route.continue();
      patches += 1;
      offsets.push(request.headers()["upload-offset"] ?? "");
      return patches > 1 ? route.abort("connectionreset") : route.continue();
    });
    await page.getByLabel("Upload video").setInputFiles(file);
    await expect.poll(() => patches, { timeout: 30_000 }).toBeGreaterThan(1);
    // Reloaded while the connection is still down (tus-js-client's retries are refused too).
    await page.reload();
    await page.getByRole("link", { name: "long-take", exact: true }).waitFor();
    await page.unroute("**/tus/**");

    const resumed: string[] = [];
    page.on("request", (request) => {
      if (request.url().includes("/tus/") && request.method() === "PATCH")
        resumed.push(request.headers()["upload-offset"] ?? "");
    });
    await page.getByLabel("Upload video").setInputFiles(file);
    await page
      .getByText(/\(resumed\)|Uploaded/)
      .first()
      .waitFor();
    await page.waitForFunction(
      () =>
        (document.querySelector('progress[aria-label="Uploading long-take.mp4"]') as HTMLProgressElement | null)
          ?.value === 100,
      null,
      { timeout: 60_000 },
    );
    expect(offsets[0]).toBe("0");
    expect(resumed[0]).toBe(String(16 * 1024 * 1024));
    // One video, uploaded once: it goes on to encoding.
    const projectId = new URL(projectUrl).pathname.split("/")[3];
    const takes = async () => {
      const list = await (await page.request.get(`${server.baseUrl}/v1/videos?projectId=${projectId}`)).json();
      return list.data.filter((video: { title: string }) => video.title === "long-take") as { status: string }[];
    };
    expect(await takes()).toHaveLength(1);
    await expect.poll(async () => (await takes())[0]?.status, { timeout: 30_000 }).not.toBe("waiting_for_upload");
  }, 120_000);

  it("finds videos by title words and tags, tags a video, cuts a clip of it and imports one from a URL", async () => {
    await page.goto(projectUrl);
    // An origin on this machine (loopback is allowed in local development, as for webhooks).
    const origin = createServer((_request, response) => {
      response.writeHead(200, { "content-type": "video/mp4", "content-length": String(clip.byteLength) });
      response.end(Buffer.from(clip));
    });
    await new Promise<void>((resolve) => origin.listen(0, "127.0.0.1", resolve));
    const { port } = origin.address() as AddressInfo;
    await page.getByLabel("Video URL").fill("http://10.0.0.1/private.mp4");
    await page.getByRole("button", { name: "Import", exact: true }).click();
    await page.getByText("must be a public address", { exact: false }).waitFor();
    await page.getByLabel("Video URL").fill(`http://127.0.0.1:${port}/imported-take.mp4`);
    await page.getByRole("button", { name: "Import", exact: true }).click();
    await page.getByText("Importing imported-take.").waitFor();
    await page.getByRole("link", { name: "imported-take", exact: true }).waitFor();
    await expect.poll(() => rowStatus("imported-take"), { timeout: 90_000 }).toBe("ready");
    origin.close();
    await page
      .getByLabel("Upload video")
      .setInputFiles({ name: "tagged-take.mp4", mimeType: "video/mp4", buffer: Buffer.from(clip) });
    await page.getByRole("link", { name: "tagged-take", exact: true }).waitFor({ timeout: 30_000 });
    const search = page.getByLabel("Search");
    await search.fill("TAGGED tak");
    await search.press("Enter");
    await page.getByRole("link", { name: "long-take", exact: true }).waitFor({ state: "detached" });
    await page.getByRole("link", { name: "tagged-take", exact: true }).waitFor();
    await search.fill("nowhere");
    await search.press("Enter");
    await page.getByText("No videos match these filters.").waitFor();
    await search.fill("");
    await search.press("Enter");

    await page.getByRole("link", { name: "tagged-take", exact: true }).click();
    await page.getByRole("heading", { name: "tagged-take" }).waitFor();
    await page.getByLabel("Tags").fill("launch, demo");
    await page.getByRole("button", { name: "Save", exact: true }).click();
    await page.getByText("Title and tags saved.").waitFor();

    // The clip form is there once the video is processing or ready; a span under 1 s is refused in words.
    await page.getByLabel("Clip start").waitFor({ timeout: 60_000 });
    await page.getByLabel("Clip end").fill("0.5");
    await page.getByRole("button", { name: "Create clip" }).click();
    await page.getByText("must be at least 1 s after start").waitFor();
    await page.getByLabel("Clip start").fill("0.5");
    await page.getByLabel("Clip end").fill("2.5");
    await page.getByRole("button", { name: "Create clip" }).click();
    await page.getByRole("heading", { name: "tagged-take (clip)" }).waitFor();
    await checkView("a clip");
    await page.getByText("ready", { exact: true }).waitFor({ timeout: 90_000 });
    expect(await page.getByText("Duration", { exact: true }).isVisible()).toBe(true);

    await page.goto(projectUrl);
    // The list is read before the filter is typed (an answer to the first read must not come after).
    await page.getByRole("link", { name: "tagged-take (clip)", exact: true }).waitFor();
    const tag = page.getByLabel("Tag", { exact: true });
    await tag.fill("demo");
    await tag.press("Enter");
    await page.getByRole("link", { name: "tagged-take (clip)", exact: true }).waitFor({ state: "detached" });
    await page.getByRole("link", { name: "tagged-take", exact: true }).waitFor();
    await checkView("videos filtered by tag");
  }, 180_000);

  it("changes the password on the Account view, ending the account's other sessions", async () => {
    const other = await fetch(`${server.baseUrl}/v1/auth/login`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ email: EMAIL, password: PASSWORD }),
    });
    const otherCookie = (other.headers.get("set-cookie") ?? "").split(";")[0] ?? "";
    const accountWith = (cookie: string) => fetch(`${server.baseUrl}/v1/account`, { headers: { cookie } });
    expect((await accountWith(otherCookie)).status).toBe(200);

    await page.getByRole("link", { name: "Account", exact: true }).click();
    await page.getByRole("heading", { name: "Account", exact: true }).waitFor();
    await checkView("account");
    // A wrong current password: the API's words next to the field, and nothing typed is lost.
    const newPassword = "a changed dashboard password";
    await page.getByLabel("Current password").fill("not the password");
    await page.getByLabel("New password").fill(newPassword);
    await page.getByRole("button", { name: "Change password" }).click();
    await page.getByText("The current password is wrong.").waitFor();
    expect(await page.getByLabel("New password").inputValue()).toBe(newPassword);
    await page.getByLabel("Current password").fill(PASSWORD);
    await page.getByRole("button", { name: "Change password" }).click();
    await page
      .getByRole("status")
      .getByText(/password has been changed/)
      .waitFor();
    await checkView("account, password changed");
    // This session stays; the other one has ended; the new password logs in.
    expect((await accountWith(otherCookie)).status).toBe(401);
    await page.getByRole("link", { name: "Video dashboard" }).click();
    await page.getByRole("heading", { name: "Projects" }).waitFor();
    const login = await fetch(`${server.baseUrl}/v1/auth/login`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ email: EMAIL, password: newPassword }),
    });
    expect(login.status).toBe(200);
  });
});
