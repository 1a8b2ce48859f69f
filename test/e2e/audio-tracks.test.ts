import { mkdirSync, mkdtempSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { packetsSpan } from "../../encoder/audio.mjs";
import { heardTone, writeTone } from "../../encoder/test/media.mjs";
import { launchChromium, requireChromium } from "./chromium.ts";
import { keyedTenant } from "./client.ts";
import { binaries, clip, probe, uploadVideo, type Video, waitForStatus } from "./media.ts";
import { type DevServer, startDevServer } from "./server.ts";

/**
 * Audio in other languages end to end (docs/audio-tracks.md) on the real dev server and encoder: a
 * French track (an 880 Hz tone, put by URL) over a video whose own audio is a 440 Hz tone is fetched,
 * made, cut at the video's segments and plays its own audio; a file without audio (put as bytes) errors; in Debian's Chromium the
 * embed page switches to the French track from its audio menu while the picture plays on; a deleted
 * track leaves the master playlist.
 */
const chromium = requireChromium("the audio tracks browser test");
const OUT = path.resolve(import.meta.dirname, "../../.vitest");
const scratch = mkdtempSync(path.join(tmpdir(), "video-api-audio-"));

type Track = { language: string; label: string; status: string; default: boolean; error?: { code: string } };

let server: DevServer;
let tenant: Awaited<ReturnType<typeof keyedTenant>>;
let video: Video;
/** Where the French track's file is fetched from: an origin on this machine (loopback is allowed in development). */
let origin: Server;

function putTrack(language: string, bytes: Uint8Array, type: string) {
  return fetch(`${server.baseUrl}/v1/videos/${video.id}/audio-tracks/${language}`, {
    method: "PUT",
    body: bytes.slice(),
    headers: { "content-type": type, authorization: `Bearer ${tenant.keys[0]}` },
  });
}

async function tracks(): Promise<Track[]> {
  return (await tenant.call("GET", `/v1/videos/${video.id}/audio-tracks`)).json.data as Track[];
}

const text = async (url: string) => {
  const response = await fetch(url);
  expect(response.status, url).toBe(200);
  return response.text();
};

/** The EXTINF durations of a media playlist, and its segments' URIs. */
const durations = (playlist: string) => [...playlist.matchAll(/^#EXTINF:([\d.]+),/gm)].map((match) => Number(match[1]));
const uris = (playlist: string) => playlist.split("\n").filter((line) => line && !line.startsWith("#"));

describe("audio tracks, end to end", () => {
  beforeAll(async () => {
    server = await startDevServer();
    tenant = await keyedTenant(server.baseUrl, { name: "audio" });
    const settings = await tenant.owner.request("PATCH", `/v1/projects/${tenant.projectId}/encoding-settings`, {
      body: { enabledResolutions: ["360p"] },
    });
    expect(settings.status).toBe(200);
    // 12 s of a test pattern with a 440 Hz tone: three 4 s segments.
    const uploaded = await uploadVideo(tenant.call, await clip({ width: 640, height: 360, seconds: 12 }));
    video = await waitForStatus(tenant.call, uploaded.id, ["ready"], 60);
    // The French track by URL (fetched by the imports' machinery), the other as the file's bytes.
    const french = await writeTone(binaries.ffmpeg, path.join(scratch, "fr.m4a"), 880, 15);
    origin = createServer((_request, response) => {
      response.writeHead(200, { "content-type": "audio/mp4", "content-length": french.length }).end(french);
    });
    await new Promise<void>((resolve) => origin.listen(0, "127.0.0.1", resolve));
    const sourceUrl = `http://127.0.0.1:${(origin.address() as AddressInfo).port}/fr.m4a`;
    const byUrl = await tenant.call("PUT", `/v1/videos/${video.id}/audio-tracks/fr`, { sourceUrl });
    expect([byUrl.status, byUrl.json]).toEqual([
      202,
      { language: "fr", label: "French", status: "processing", default: false },
    ]);
    const silent = await clip({ width: 320, height: 180, seconds: 2, audio: false });
    expect((await putTrack("de", silent, "video/mp4")).status).toBe(202);
  }, 120_000);
  afterAll(async () => {
    origin?.close();
    await server?.stop();
  });

  it("makes the French track of the video's segments, plays its own audio, and errors a file without audio", async () => {
    await expect
      .poll(async () => (await tracks()).map((track) => track.status), { timeout: 30_000, interval: 250 })
      .toEqual(["ready", "errored", "ready"]);
    expect(await tracks()).toEqual([
      { language: "und", label: "Original", status: "ready", default: true },
      {
        language: "de",
        label: "German",
        status: "errored",
        default: false,
        error: { code: "invalid_source", message: expect.stringContaining("no audio stream") },
      },
      { language: "fr", label: "French", status: "ready", default: false },
    ]);
    const play = `${server.baseUrl}/play/${video.id}`;
    const master = await text(`${play}/master.m3u8`);
    const media = master.split("\n").filter((line) => line.startsWith("#EXT-X-MEDIA:"));
    expect(media).toEqual([
      '#EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID="audio",NAME="Original",LANGUAGE="und",AUTOSELECT=YES,DEFAULT=YES',
      expect.stringMatching(
        /^#EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID="audio",NAME="French",LANGUAGE="fr",AUTOSELECT=YES,DEFAULT=NO,URI="audio\/[0-9A-Z]{26}\/index\.m3u8"$/,
      ),
    ]);
    for (const variant of master.split("\n").filter((line) => line.startsWith("#EXT-X-STREAM-INF:"))) {
      expect(variant).toMatch(/,AUDIO="audio"$/);
    }
    const playlistUrl = new URL(/URI="([^"]+)"/.exec(media[1] ?? "")?.[1] ?? "", `${play}/`).href;
    const playlist = await text(playlistUrl);
    const videoPlaylist = await text(`${play}/360p/index.m3u8`);
    // The video's segment count, each segment as long as the video's.
    expect(durations(playlist)).toEqual(durations(videoPlaylist));
    expect(durations(playlist)).toHaveLength(3);
    for (const [index, uri] of uris(playlist).entries()) {
      const url = new URL(uri, playlistUrl).href;
      const { streams, packets = [] } = (await probe(url, [
        "-show_streams",
        "-show_entries",
        "packet=pts_time,duration_time",
      ])) as {
        streams: { codec_type: string; codec_name: string }[];
        packets?: Record<string, unknown>[];
      };
      expect(streams.map((stream) => [stream.codec_type, stream.codec_name])).toEqual([["audio", "aac"]]);
      expect(Math.abs(packetsSpan(packets) - (durations(videoPlaylist)[index] as number))).toBeLessThan(0.1);
    }
    // It plays the French track's tone; the video's own segments keep the original's.
    const french = await heardTone(
      binaries.ffmpeg,
      new URL(uris(playlist)[1] as string, playlistUrl).href,
      path.join(scratch, "fr.pcm"),
    );
    expect(french.frequency).toBeGreaterThan(860);
    expect(french.frequency).toBeLessThan(900);
    const original = await heardTone(
      binaries.ffmpeg,
      `${play}/360p/${uris(videoPlaylist)[1]}`,
      path.join(scratch, "en.pcm"),
    );
    expect(original.frequency).toBeGreaterThan(430);
    expect(original.frequency).toBeLessThan(450);
  });

  describe.skipIf(!chromium)("in Debian's Chromium", () => {
    it("switches the embed page to the French track from its audio menu while the video plays", async () => {
      mkdirSync(OUT, { recursive: true });
      const browser = await launchChromium();
      try {
        const page = await browser.newPage({ viewport: { width: 1280, height: 720 } });
        const audioRequests: string[] = [];
        page.on("request", (request) => {
          if (/\/audio\/[0-9A-Z]{26}\//.test(request.url())) audioRequests.push(request.url());
        });
        expect((await page.goto(`${server.baseUrl}/embed/${video.id}`, { waitUntil: "load" }))?.status()).toBe(200);
        type Player = HTMLElement & {
          api: { audioTracks: { name: string; lang: string }[]; audioTrack: number };
          audioTracks: ArrayLike<{ label: string; language: string; enabled: boolean }>;
          nativeEl: HTMLVideoElement;
        };
        const hlsAudio = () =>
          page.evaluate(() => {
            const player = (window as unknown as { player: Player }).player;
            return {
              tracks: player.api.audioTracks.map((track) => [track.name, track.lang]),
              selected: player.api.audioTrack,
              enabled: Array.from(player.audioTracks)
                .filter((track) => track.enabled)
                .map((track) => track.label),
            };
          });
        await page.waitForFunction(
          () => (window as unknown as { player: Player }).player?.api?.audioTracks?.length === 2,
        );
        expect(await hlsAudio()).toEqual({
          tracks: [
            ["Original", "und"],
            ["French", "fr"],
          ],
          selected: 0,
          enabled: ["Original"],
        });
        await page.evaluate(() => {
          const media = (window as unknown as { player: Player }).player.nativeEl;
          media.muted = true;
          return media.play();
        });
        const currentTime = () =>
          page.evaluate(() => (window as unknown as { player: Player }).player.nativeEl.currentTime);
        await page.waitForFunction(
          () => (window as unknown as { player: Player }).player.nativeEl.currentTime > 1,
          null,
          {
            timeout: 20_000,
          },
        );

        // The settings menu's Audio submenu lists both; choosing French switches hls.js to its playlist.
        await page.click("media-settings-menu-button");
        await page.waitForFunction(() => !(document.querySelector("media-settings-menu") as HTMLElement).hidden);
        await page.waitForTimeout(300);
        await page.locator("media-settings-menu-item", { hasText: "Audio" }).click();
        const items = page.locator("media-audio-track-menu [role=menuitemradio]");
        await expect.poll(() => items.allInnerTexts()).toEqual(["Original", "French"]);
        await page.screenshot({ path: path.join(OUT, "embed-audio-menu.png") });
        const switchedAt = await currentTime();
        await items.filter({ hasText: "French" }).click();
        await expect.poll(hlsAudio, { timeout: 10_000 }).toMatchObject({ selected: 1, enabled: ["French"] });
        // The picture plays on, now with the French track's segments.
        await expect.poll(currentTime, { timeout: 15_000 }).toBeGreaterThan(switchedAt + 1.5);
        expect(await page.evaluate(() => (window as unknown as { player: Player }).player.nativeEl.paused)).toBe(false);
        expect(audioRequests.some((url) => url.endsWith("/index.m3u8"))).toBe(true);
        expect(audioRequests.some((url) => /seg_\d{5}\.ts$/.test(url))).toBe(true);
      } finally {
        await browser.close();
      }
    });
  });

  it("takes a deleted track out of the master playlist at once", async () => {
    const play = `${server.baseUrl}/play/${video.id}`;
    expect((await tenant.call("DELETE", `/v1/videos/${video.id}/audio-tracks/fr`)).status).toBe(204);
    const master = await text(`${play}/master.m3u8`);
    expect(master).not.toContain('LANGUAGE="fr"');
    expect(master).not.toContain("TYPE=AUDIO");
    expect((await tenant.call("DELETE", `/v1/videos/${video.id}/audio-tracks/und`)).status).toBe(409);
  });
});
