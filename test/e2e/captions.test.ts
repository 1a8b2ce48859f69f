import { mkdirSync, readFileSync } from "node:fs";
import path from "node:path";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launchChromium, requireChromium, startSite } from "./chromium.ts";
import { keyedTenant } from "./client.ts";
import { clip, uploadVideo, type Video, waitForStatus } from "./media.ts";
import { type DevServer, startDevServer } from "./server.ts";

/**
 * Caption tracks end to end (docs/captions-and-embed.md) on the real dev server and encoder:
 * uploaded while the video encodes, read back, in the HLS a player reads, and on the embed page in
 * Debian's Chromium; there too, the video's chapters (docs/chapters.md) on the embed page's
 * timeline.
 */
const chromium = requireChromium("the captions browser tests");
const OUT = path.resolve(import.meta.dirname, "../../.vitest");

const ENGLISH = [
  "WEBVTT",
  "",
  "00:00:01.000 --> 00:00:04.000",
  "Hello from the captions",
  "",
  "00:00:04.500 --> 00:00:07.000 line:10%",
  "Second cue, line one",
  "and line two",
  "",
].join("\n");
const PORTUGUESE = "1\r\n00:00:01,000 --> 00:00:04,000\r\nOlá das legendas\r\n";

type Track = { language: string; label: string; source: string; url: string };

let server: DevServer;
let tenant: Awaited<ReturnType<typeof keyedTenant>>;
let video: Video;

function putTrack(language: string, body: string, type: string, query = "") {
  return fetch(`${server.baseUrl}/v1/videos/${video.id}/captions/${language}${query}`, {
    method: "PUT",
    body,
    headers: { "content-type": type, authorization: `Bearer ${tenant.keys[0]}` },
  });
}

const text = async (url: string) => {
  const response = await fetch(url);
  expect(response.status, url).toBe(200);
  return response.text();
};

/** The EXTINF durations of a media playlist. */
const durations = (playlist: string) => [...playlist.matchAll(/^#EXTINF:([\d.]+),/gm)].map((match) => Number(match[1]));

describe("caption tracks, end to end", () => {
  beforeAll(async () => {
    server = await startDevServer();
    tenant = await keyedTenant(server.baseUrl, { name: "captions" });
    // Two renditions, for the player's quality menu.
    const settings = await tenant.owner.request("PATCH", `/v1/projects/${tenant.projectId}/encoding-settings`, {
      body: { enabledResolutions: ["240p", "360p"] },
    });
    expect(settings.status).toBe(200);
    const uploaded = await uploadVideo(tenant.call, await clip({ width: 640, height: 360, seconds: 8 }), {
      title: "Captions",
    });
    video = (await tenant.call("GET", `/v1/videos/${uploaded.id}`)).json as Video;
    // Tracks are taken whatever the video's status: this one is still being encoded.
    expect(["uploaded", "processing"]).toContain(video.status);
    expect((await putTrack("EN", ENGLISH, "text/vtt", "?label=English%20(CC)")).status).toBe(200);
    expect((await putTrack("pt-br", PORTUGUESE, "application/x-subrip")).status).toBe(200);
    video = await waitForStatus(tenant.call, video.id, ["ready"], 90);
  });
  afterAll(async () => {
    await server?.stop();
  });

  it("reads the tracks back, as WebVTT, in the master playlist and in subtitle playlists as long as the video", async () => {
    const listed = await tenant.call("GET", `/v1/videos/${video.id}/captions`);
    expect(listed.status).toBe(200);
    const tracks = listed.json.data as Track[];
    const play = `${server.baseUrl}/play/${video.id}`;
    expect(tracks).toEqual([
      { language: "en", label: "English (CC)", source: "upload", status: "ready", url: `${play}/captions/en.vtt` },
      {
        language: "pt-BR",
        label: "Brazilian Portuguese",
        source: "upload",
        status: "ready",
        url: `${play}/captions/pt-BR.vtt`,
      },
    ]);
    expect(await text(tracks[0]?.url as string)).toBe(ENGLISH);
    expect(await text(tracks[1]?.url as string)).toBe("WEBVTT\n\n00:00:01.000 --> 00:00:04.000\nOlá das legendas\n");

    const master = await text(`${play}/master.m3u8`);
    const media = master.split("\n").filter((line) => line.startsWith("#EXT-X-MEDIA:"));
    expect(media).toEqual([
      '#EXT-X-MEDIA:TYPE=SUBTITLES,GROUP-ID="subs",NAME="English (CC)",LANGUAGE="en",AUTOSELECT=YES,DEFAULT=NO,URI="captions/en.m3u8"',
      '#EXT-X-MEDIA:TYPE=SUBTITLES,GROUP-ID="subs",NAME="Brazilian Portuguese",LANGUAGE="pt-BR",AUTOSELECT=YES,DEFAULT=NO,URI="captions/pt-BR.m3u8"',
    ]);
    const variants = master.split("\n").filter((line) => line.startsWith("#EXT-X-STREAM-INF:"));
    expect(variants).toHaveLength(2);
    for (const variant of variants) expect(variant).toMatch(/,SUBTITLES="subs"$/);

    for (const track of tracks) {
      const playlistUrl = `${play}/captions/${track.language}.m3u8`;
      const playlist = await text(playlistUrl);
      expect(playlist).toContain("#EXT-X-PLAYLIST-TYPE:VOD");
      expect(playlist.trimEnd().endsWith("#EXT-X-ENDLIST")).toBe(true);
      const sum = durations(playlist).reduce((a, b) => a + b, 0);
      expect(Math.abs(sum - (video.duration as number))).toBeLessThanOrEqual(0.5);
      // The variants' segments add up to the same duration.
      const variant = await text(`${play}/360p/index.m3u8`);
      expect(Math.abs(durations(variant).reduce((a, b) => a + b, 0) - sum)).toBeLessThanOrEqual(0.5);
      const segmentUri = playlist.split("\n").find((line) => line && !line.startsWith("#")) as string;
      const segment = await text(new URL(segmentUri, playlistUrl).href);
      // The segments' clock starts at 11.4 s (media-plan/plan.mjs, timelineStart): 1,026,000 at 90 kHz.
      expect(segment.split("\n")[1]).toBe("X-TIMESTAMP-MAP=MPEGTS:1026000,LOCAL:00:00:00.000");
    }
  });

  it("takes a deleted track out of the master playlist at once, and a new one in", async () => {
    const play = `${server.baseUrl}/play/${video.id}`;
    expect((await tenant.call("DELETE", `/v1/videos/${video.id}/captions/pt-BR`)).status).toBe(204);
    expect(await text(`${play}/master.m3u8`)).not.toContain('LANGUAGE="pt-BR"');
    expect((await fetch(`${play}/captions/pt-BR.vtt`)).status).toBe(404);
    expect((await putTrack("pt-BR", PORTUGUESE, "application/x-subrip")).status).toBe(200);
    expect(await text(`${play}/master.m3u8`)).toContain('LANGUAGE="pt-BR"');
  });

  describe.skipIf(!chromium)("in Debian's Chromium", () => {
    /** Opens a page, refusing (and recording) every request to another origin than the API's. */
    async function open(
      page: Page,
      url: string,
      allowed: string[] = [server.baseUrl],
      routes: () => Promise<void> = async () => {},
    ) {
      const elsewhere: string[] = [];
      await page.route("**/*", (route) => {
        const target = route.request().url();
        if (allowed.some((origin) => target.startsWith(`${origin}/`)) || target.startsWith("blob:")) {
          return route.continue();
        }
        elsewhere.push(target);
        return route.abort();
      });
      // Routes added later take precedence over the one above.
      await routes();
      const response = await page.goto(url, { waitUntil: "load" });
      return { response, elsewhere };
    }

    /** Opens the settings menu's submenu `item`, closing whatever menu is open first. */
    async function openSubmenu(page: Page, item: string) {
      const closed = () => page.locator("media-settings-menu").evaluate((menu) => (menu as HTMLElement).hidden);
      for (let i = 0; i < 3 && !(await closed()); i++) {
        await page.keyboard.press("Escape");
        await page.waitForTimeout(300);
      }
      await page.click("media-settings-menu-button");
      await page.waitForFunction(() => !(document.querySelector("media-settings-menu") as HTMLElement).hidden);
      // The menu slides in; a click during the slide lands on the video.
      await page.waitForTimeout(300);
      await page.locator("media-settings-menu-item", { hasText: item }).click();
      await page.waitForTimeout(300);
    }

    /** The text tracks of the page's video, as the browser lists them. */
    const textTracks = (page: Page) =>
      page.evaluate(() =>
        Array.from((document.querySelector("video") as HTMLVideoElement).textTracks).map((track) => ({
          kind: track.kind,
          label: track.label,
          language: track.language,
        })),
      );

    it.each([
      ["desktop", { width: 1280, height: 720 }],
      ["phone", { width: 390, height: 219 }],
    ] as const)(
      "the embed page at %s size offers every track, and shows a cue's text at its time",
      async (name, viewport) => {
        mkdirSync(OUT, { recursive: true });
        const browser = await launchChromium();
        try {
          const page = await browser.newPage({ viewport });
          const { response, elsewhere } = await open(page, `${server.baseUrl}/embed/${video.id}`);
          expect(response?.status()).toBe(200);
          await page.waitForFunction(() => customElements.get("media-controller") && customElements.get("hls-video"));
          expect(await textTracks(page)).toEqual([
            { kind: "subtitles", label: "English (CC)", language: "en" },
            { kind: "subtitles", label: "Brazilian Portuguese", language: "pt-BR" },
            { kind: "metadata", label: "thumbnails", language: "" },
          ]);
          // The poster shows until playback starts.
          expect(await page.locator("media-poster-image").isVisible()).toBe(true);
          await page.screenshot({ path: path.join(OUT, `embed-${name}-poster.png`) });

          // The settings menu: speed, quality (a rendition each, once the manifest is read), captions.
          await page.evaluate(() => {
            (document.querySelector("video") as HTMLVideoElement).muted = true;
          });
          await openSubmenu(page, "Quality");
          await expect
            .poll(() => page.locator("media-rendition-menu [role=menuitemradio]").allInnerTexts())
            .toEqual(["360p", "240p", expect.stringMatching(/^Auto/)]);
          await openSubmenu(page, "Speed");
          expect(await page.locator("media-playback-rate-menu [role=menuitemradio]").allInnerTexts()).toContain("2x");
          await openSubmenu(page, "Captions");
          const items = page.locator("media-captions-menu [role=menuitemradio]");
          expect(await items.allInnerTexts()).toEqual(["Off", "English (CC)", "Brazilian Portuguese"]);
          await page.screenshot({ path: path.join(OUT, `embed-${name}-captions-menu.png`) });
          await items.filter({ hasText: "English (CC)" }).click();

          await page.click("media-play-button");
          await page.waitForFunction(
            () => (document.querySelector("video") as HTMLVideoElement).currentTime > 1.5,
            null,
            { timeout: 20_000 },
          );
          const shown = await page.evaluate(() => {
            const media = document.querySelector("video") as HTMLVideoElement;
            const english = Array.from(media.textTracks).find((track) => track.language === "en");
            return {
              mode: english?.mode,
              active: Array.from(english?.activeCues ?? []).map((cue) => (cue as VTTCue).text),
            };
          });
          expect(shown).toEqual({ mode: "showing", active: ["Hello from the captions"] });
          await page.mouse.move(viewport.width / 2, viewport.height / 2);
          await page.waitForTimeout(400);
          await page.screenshot({ path: path.join(OUT, `embed-${name}-playing.png`) });

          // Keyboard shortcuts: k pauses, > speeds up, ? lists them all.
          await page.keyboard.press("k");
          await page.waitForFunction(() => (document.querySelector("video") as HTMLVideoElement).paused);
          await page.keyboard.press(">");
          await page.waitForFunction(() => (document.querySelector("video") as HTMLVideoElement).playbackRate > 1);
          await page.keyboard.press("Shift+Slash");
          await page.waitForFunction(() =>
            Boolean(document.querySelector("media-keyboard-shortcuts-dialog")?.hasAttribute("open")),
          );
          if (name === "desktop") {
            for (const control of ["media-pip-button", "media-fullscreen-button", "media-volume-range"]) {
              expect(await page.locator(control).isVisible(), control).toBe(true);
            }
          }

          // No storyboard yet: its track answers 404, and the timeline shows no picture, only the time.
          expect(
            await page.evaluate(
              () => document.querySelector("media-preview-thumbnail")?.getAttribute("mediapreviewimage") ?? null,
            ),
          ).toBeNull();
          expect(elsewhere).toEqual([]);
        } finally {
          await browser.close();
        }
      },
    );

    it("shows storyboard previews on the timeline once the video has a storyboard.vtt", async () => {
      // The storyboard is not made yet (its storyboard.vtt:
      // docs/encoding.md#frames-and-the-storyboard): here the browser is handed one.
      const play = `${server.baseUrl}/play/${video.id}`;
      const sprite = new Uint8Array(await (await fetch(video.thumbnail.url)).arrayBuffer());
      const storyboard =
        "WEBVTT\n\n00:00:00.000 --> 00:00:04.000\nstoryboard.jpg#xywh=0,0,320,180\n\n00:00:04.000 --> 00:00:09.000\nstoryboard.jpg#xywh=320,180,320,180\n";
      const browser = await launchChromium();
      try {
        const page = await browser.newPage({ viewport: { width: 1280, height: 720 } });
        const { response } = await open(page, `${server.baseUrl}/embed/${video.id}`, [server.baseUrl], async () => {
          await page.route(`${play}/storyboard.vtt`, (route) =>
            route.fulfill({ status: 200, contentType: "text/vtt", body: storyboard }),
          );
          await page.route(`${play}/storyboard.jpg`, (route) =>
            route.fulfill({ status: 200, contentType: "image/jpeg", body: Buffer.from(sprite) }),
          );
        });
        expect(response?.status()).toBe(200);
        await page.waitForFunction(
          () => Number(document.querySelector("media-controller")?.getAttribute("mediaduration")) > 0,
        );
        await page.waitForFunction(() =>
          Array.from((document.querySelector("video") as HTMLVideoElement).textTracks).some(
            (track) => track.label === "thumbnails" && (track.cues?.length ?? 0) === 2,
          ),
        );
        const range = await page.locator("media-time-range").boundingBox();
        if (!range) throw new Error("no timeline");
        // Hovering three quarters along (6 s of 8) asks for the second tile; a user's pointer moves.
        let step = 0;
        await expect
          .poll(async () => {
            step += 1;
            await page.mouse.move(range.x + range.width * 0.75 + (step % 5), range.y + range.height / 2);
            return page.evaluate(() =>
              document.querySelector("media-preview-thumbnail")?.getAttribute("mediapreviewimage"),
            );
          })
          .toMatch(/\/play\/[^/]+\/storyboard\.jpg#xywh=320,180,320,180$/);
        // The preview fades in after a short delay.
        await page.waitForFunction(() => {
          const thumbnail = document.querySelector("media-time-range > media-preview-thumbnail") as HTMLElement;
          return getComputedStyle(thumbnail).visibility === "visible" && thumbnail.getBoundingClientRect().width > 0;
        });
        await page.waitForTimeout(600);
        await page.screenshot({ path: path.join(OUT, "embed-desktop-storyboard.png") });
      } finally {
        await browser.close();
      }
    });

    it("plays the HLS's subtitle renditions in time with the video, with hls.js on another origin", async () => {
      // hls.js's full build (the one with subtitles), as a customer's page would load it.
      const site = await startSite(
        `<!doctype html><video muted playsinline></video><script src="/hls.min.js"></script><script>
  window.hls = new Hls();
  window.hls.loadSource("${server.baseUrl}/play/${video.id}/master.m3u8");
  window.hls.attachMedia(document.querySelector("video"));
</script>`,
        { "/hls.min.js": ["text/javascript", readFileSync(path.resolve("node_modules/hls.js/dist/hls.min.js"))] },
      );
      const browser = await launchChromium();
      try {
        const page = await browser.newPage();
        const { elsewhere } = await open(page, site.origin, [server.baseUrl, site.origin]);
        type Hls = { subtitleTracks: { name: string; lang: string }[]; subtitleTrack: number };
        await page.waitForFunction(() => (window as unknown as { hls: Hls }).hls.subtitleTracks.length > 0);
        expect(
          await page.evaluate(() =>
            (window as unknown as { hls: Hls }).hls.subtitleTracks.map((track) => [track.name, track.lang]),
          ),
        ).toEqual([
          ["English (CC)", "en"],
          ["Brazilian Portuguese", "pt-BR"],
        ]);
        await page.evaluate(() => {
          (window as unknown as { hls: Hls }).hls.subtitleTrack = 0;
          return (document.querySelector("video") as HTMLVideoElement).play();
        });
        await page.waitForFunction(
          () => {
            const media = document.querySelector("video") as HTMLVideoElement;
            return (
              media.currentTime > 1.5 &&
              Array.from(media.textTracks).some((track) => (track.activeCues?.length ?? 0) > 0)
            );
          },
          null,
          { timeout: 20_000 },
        );
        // X-TIMESTAMP-MAP puts each cue at its own time on the video's timeline (without it, 11.4 s
        // early): its time from the video's first picture, wherever the player put that picture.
        const { cues: timed, firstPicture } = await page.evaluate(() => {
          const media = document.querySelector("video") as HTMLVideoElement;
          return {
            firstPicture: media.buffered.start(0),
            cues: Array.from(media.textTracks).flatMap((track) =>
              Array.from(track.cues ?? []).map((cue) => [cue.startTime, cue.endTime, (cue as VTTCue).text]),
            ),
          };
        });
        console.log(`first picture at ${firstPicture} s of the player's clock; cues ${JSON.stringify(timed)}`);
        const cues = timed.map(([start, end, words]) => [
          (start as number) - firstPicture,
          (end as number) - firstPicture,
          words,
        ]);
        expect(cues).toHaveLength(2);
        const [first, second] = cues as [[number, number, string], [number, number, string]];
        expect(first[0]).toBeCloseTo(1, 1);
        expect(first[1]).toBeCloseTo(4, 1);
        expect(first[2]).toBe("Hello from the captions");
        expect(second[0]).toBeCloseTo(4.5, 1);
        expect(elsewhere).toEqual([]);
      } finally {
        await browser.close();
        await site.close();
      }
    });

    it("shows the video's chapters: a chapters track of the page's video, and the title under the pointer", async () => {
      const chapters = [
        { start: 0, title: "Opening" },
        { start: 4, title: "Q&A <live>" },
      ];
      expect((await tenant.call("PUT", `/v1/videos/${video.id}/chapters`, { chapters })).status).toBe(200);
      const browser = await launchChromium();
      try {
        const page = await browser.newPage({ viewport: { width: 1280, height: 720 } });
        const { response, elsewhere } = await open(page, `${server.baseUrl}/embed/${video.id}`);
        expect(response?.status()).toBe(200);
        await page.waitForFunction(
          () => Number(document.querySelector("media-controller")?.getAttribute("mediaduration")) > 0,
        );
        // The browser reads the track (a default chapters track loads by itself), its titles as sent.
        await page.waitForFunction(() =>
          Array.from((document.querySelector("video") as HTMLVideoElement).textTracks).some(
            (track) => track.kind === "chapters" && (track.cues?.length ?? 0) === 2,
          ),
        );
        const track = await page.evaluate(() => {
          const media = document.querySelector("video") as HTMLVideoElement;
          const chaptersTrack = Array.from(media.textTracks).find((one) => one.kind === "chapters");
          const element = media.querySelector("track[kind=chapters]") as HTMLTrackElement;
          return {
            src: element.src,
            label: chaptersTrack?.label,
            cues: Array.from(chaptersTrack?.cues ?? []).map((cue) => [cue.startTime, cue.endTime]),
          };
        });
        expect(track).toEqual({
          src: `${server.baseUrl}/play/${video.id}/chapters.vtt`,
          label: "Chapters",
          cues: [
            [0, 4],
            [4, video.duration],
          ],
        });
        // Hovering the timeline shows the title of the chapter under the pointer, decoded as typed.
        const range = await page.locator("media-time-range").boundingBox();
        if (!range) throw new Error("no timeline");
        const titleAt = async (fraction: number) => {
          let step = 0;
          await expect
            .poll(async () => {
              // A pointer that sweeps a little (a second apart, within the chapter): the time range
              // asks for a preview only when the time under the pointer moves by a second or more.
              step += 1;
              const at = fraction + (step % 2) * 0.05;
              await page.mouse.move(range.x + range.width * at, range.y + range.height / 2);
              // What the display shows: the text of its shadow root's slot.
              return page.evaluate(
                () =>
                  document.querySelector("media-preview-chapter-display")?.shadowRoot?.querySelector("slot")
                    ?.textContent,
              );
            })
            .toBe(chapters[fraction < 0.5 ? 0 : 1]?.title);
        };
        await titleAt(0.2);
        await titleAt(0.8);
        await page.waitForTimeout(600);
        await page.screenshot({ path: path.join(OUT, "embed-desktop-chapters.png") });
        expect(elsewhere).toEqual([]);
      } finally {
        await browser.close();
        await tenant.call("DELETE", `/v1/videos/${video.id}/chapters`);
      }
    });
  });
});
