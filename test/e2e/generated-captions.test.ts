import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { Webhook } from "standardwebhooks";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { makeSpokenClip, requireSpeech } from "../../encoder/test/spoken.mjs";
import type { Word } from "../../media-plan/protocol.mjs";
import { parseWebVtt } from "../../src/captions/webvtt";
import { launchChromium, requireChromium } from "./chromium.ts";
import { keyedTenant } from "./client.ts";
import { seriousViolations } from "./dashboard-support.ts";
import { binaries, clip, uploadVideo } from "./media.ts";
import { startReceiver } from "./receiver.ts";
import { type DevServer, startDevServer } from "./server.ts";

/**
 * Captions that write themselves (docs/generated-captions.md), end to end: a video of two spoken
 * sentences 8 s apart (each word said by espeak-ng, so its time is known) gets a ready English
 * track heard by the encoder's pocketsphinx through `npm run dev`, whose cues follow the speech, in
 * the master playlist and the embed page, announced by a signed `video.captions.ready`; a silent
 * video's track is skipped; the dashboard generates one and shows its status change.
 */
const speech = requireSpeech("the generated captions test");
const chromium = requireChromium("the generated captions dashboard test");

const SENTENCES = [
  { at: 1, text: "Welcome to the video hosting service." },
  // 8 s of silence after the first sentence (about 2.8 s long).
  { at: 11.8, text: "Thank you for watching this short video." },
];

type Track = { language: string; label: string; source: string; status: string; url: string };

let server: DevServer;
let tenant: Awaited<ReturnType<typeof keyedTenant>>;
let receiver: Awaited<ReturnType<typeof startReceiver>>;
let secret: string;
let said: Word[];
let videoId: string;

/** The video's tracks, until `done` says they are (at most `seconds`). */
async function tracksUntil(id: string, done: (tracks: Track[]) => boolean, seconds = 90): Promise<Track[]> {
  const deadline = Date.now() + seconds * 1000;
  for (;;) {
    const tracks = (await tenant.call("GET", `/v1/videos/${id}/captions`)).json.data as Track[];
    if (done(tracks) || Date.now() > deadline) return tracks;
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}

describe.runIf(speech)("generated captions, end to end", () => {
  beforeAll(async () => {
    const made = await makeSpokenClip(binaries, mkdtempSync(path.join(tmpdir(), "spoken-")), {
      sentences: SENTENCES,
      seconds: 20,
    });
    said = made.words;
    server = await startDevServer();
    tenant = await keyedTenant(server.baseUrl, { name: "speech" });
    receiver = await startReceiver();
    const endpoint = await tenant.call("POST", `/v1/projects/${tenant.projectId}/webhook-endpoints`, {
      url: receiver.url(),
      eventTypes: ["video.captions.ready", "video.captions.errored"],
    });
    secret = endpoint.json.secret;
    // Asked for at creation: heard as soon as the video is playable.
    const uploaded = await uploadVideo(tenant.call, new Uint8Array(made.bytes), {
      title: "Spoken",
      generatedCaptions: ["en"],
    });
    videoId = uploaded.id;
  });
  afterAll(async () => {
    await receiver?.close();
    await server?.stop();
  });

  it("makes a ready English track whose cues follow the speech, played and announced", async () => {
    const tracks = await tracksUntil(videoId, (all) =>
      all.some((track) => track.status !== "processing" && all.length > 0),
    );
    expect(tracks).toMatchObject([
      { language: "en", label: "English (auto-generated)", source: "generated", status: "ready" },
    ]);
    const vtt = await (await fetch(`${server.baseUrl}/play/${videoId}/captions/en.vtt`)).text();
    const parsed = parseWebVtt(vtt);
    if (!parsed.ok) throw new Error(parsed.problem);
    expect(parsed.cues.length).toBeGreaterThan(0);
    const firstEnd = (said.findLast((word) => word.start < 10) as Word).end;
    const secondStart = (said.find((word) => word.start > 10) as Word).start;
    for (const cue of parsed.cues) {
      // A cue starts within 1 s of a word said; none lies in the 8 s without speech.
      const nearest = Math.min(...said.map((word) => Math.abs(word.start * 1000 - cue.start)));
      expect(nearest, vtt).toBeLessThanOrEqual(1000);
      expect(cue.start >= (firstEnd + 2) * 1000 && cue.end <= secondStart * 1000, vtt).toBe(false);
      expect(cue.end - cue.start).toBeLessThanOrEqual(7000);
      for (const line of cue.text.split("\n")) expect(line.length).toBeLessThanOrEqual(42);
    }
    expect(parsed.cues.some((cue) => cue.start < 10_000)).toBe(true);
    expect(parsed.cues.some((cue) => cue.start > 10_000)).toBe(true);
    const master = await (await fetch(`${server.baseUrl}/play/${videoId}/master.m3u8`)).text();
    expect(master).toContain('NAME="English (auto-generated)",LANGUAGE="en"');
    const embed = await (await fetch(`${server.baseUrl}/embed/${videoId}`)).text();
    expect(embed).toContain('srclang="en" label="English (auto-generated)"');
    // The signed event, with the track as the API shows it.
    const deadline = Date.now() + 10_000;
    while (receiver.received.length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 200));
    const [delivery] = receiver.received;
    if (!delivery) throw new Error("no video.captions.ready delivered");
    const event = new Webhook(secret.slice("whsec_".length)).verify(delivery.body, {
      "webhook-id": String(delivery.headers["webhook-id"]),
      "webhook-timestamp": String(delivery.headers["webhook-timestamp"]),
      "webhook-signature": String(delivery.headers["webhook-signature"]),
    }) as { type: string; data: { id: string; track: Track } };
    expect(event).toMatchObject({ type: "video.captions.ready", data: { id: videoId, track: { status: "ready" } } });
  });

  it("skips the track of a video without audio", async () => {
    const silent = await uploadVideo(tenant.call, await clip({ width: 320, height: 180, seconds: 3, audio: false }));
    let asked = await tenant.call("POST", `/v1/videos/${silent.id}/captions/en/generate`);
    for (let i = 0; i < 60 && asked.status === 409; i++) {
      // Generation takes a video with its source being encoded: wait for the encoding to start.
      await new Promise((resolve) => setTimeout(resolve, 250));
      asked = await tenant.call("POST", `/v1/videos/${silent.id}/captions/en/generate`);
    }
    expect(asked.status).toBe(202);
    const tracks = await tracksUntil(silent.id, (all) => all[0]?.status !== "processing");
    expect(tracks).toMatchObject([{ status: "skipped" }]);
  });

  it.runIf(chromium)(
    "is generated from the dashboard, its status changing without a reload",
    async () => {
      const browser = await launchChromium();
      try {
        const context = await browser.newContext();
        const [name, value] = (tenant.owner.cookie ?? "").split("=");
        await context.addCookies([{ name: name ?? "", value: value ?? "", url: server.baseUrl }]);
        const page = await context.newPage();
        await page.goto(`${server.baseUrl}/dashboard/projects/${tenant.projectId}/videos/${videoId}`);
        await page.getByRole("heading", { name: "Captions" }).waitFor();
        const row = page.getByRole("row", { name: /English \(auto-generated\)/ });
        await row.getByRole("button", { name: "Download" }).waitFor();
        // Asked again from the dashboard: processing, then ready, without a reload.
        await page.getByRole("combobox", { name: "Language" }).selectOption("en");
        await page.getByRole("button", { name: "Generate captions" }).click();
        await row.getByText("processing").waitFor();
        await row.getByText("ready").waitFor({ timeout: 60_000 });
        expect(await row.getByRole("button", { name: "Download" }).isVisible()).toBe(true);
        expect(await seriousViolations(page)).toEqual([]);
        // A language the engine does not hear is refused in the API's words.
        await page.getByRole("combobox", { name: "Language" }).selectOption("fr");
        await page.getByRole("button", { name: "Generate captions" }).click();
        await page.getByText(/hears en/).waitFor();
      } catch (error) {
        const pages = browser.contexts().flatMap((context) => context.pages());
        await pages[0]?.screenshot({ path: path.resolve(import.meta.dirname, "../../.vitest/generated-captions.png") });
        console.log(await pages[0]?.locator("body").textContent());
        throw error;
      } finally {
        await browser.close();
      }
    },
    120_000,
  );
});
