import { expect } from "vitest";
import { launchChromium } from "./chromium.ts";
import { ffmpeg, probe } from "./media.ts";

/**
 * The MP4 opens at once (docs/encoding.md#long-videos-playable-in-seconds): metadata, and a seek,
 * each within this long, for any length.
 */
export const OPENS_WITHIN_MS = 5_000;

/**
 * The MP4 opens at once (docs/encoding.md#long-videos-playable-in-seconds), measured from outside:
 * ffprobe over HTTP reads its duration, ffmpeg seeks to 80% of it and decodes a frame, and
 * Chromium's `<video src>` has its metadata and completes a seek there, each within
 * OPENS_WITHIN_MS. Returns the times (ms).
 */
export async function expectMp4OpensAtOnce(url: string, duration: number) {
  let start = performance.now();
  const probed = (await probe(url, ["-show_entries", "format=duration"])) as { format?: { duration?: string } };
  const probeMs = performance.now() - start;
  expect(Number(probed.format?.duration)).toBeCloseTo(duration, 0);

  start = performance.now();
  const at = (duration * 0.8).toFixed(3);
  await ffmpeg(["-v", "error", "-ss", at, "-i", url, "-frames:v", "1", "-f", "null", "-"]);
  const seekMs = performance.now() - start;

  const browser = await launchChromium();
  try {
    const page = await browser.newPage();
    await page.setContent("<!doctype html><title>mp4</title><body></body>");
    const times = await page.evaluate(
      async ([src, target]) => {
        const video = document.createElement("video");
        video.muted = true;
        video.preload = "metadata";
        const began = performance.now();
        const event = (name: string) =>
          new Promise<void>((resolve, reject) => {
            video.addEventListener(name, () => resolve(), { once: true });
            video.addEventListener("error", () => reject(new Error(`video error ${video.error?.code}`)), {
              once: true,
            });
          });
        const metadata = event("loadedmetadata");
        video.src = src;
        document.body.append(video);
        await metadata;
        const metadataMs = performance.now() - began;
        const seekBegan = performance.now();
        const seeked = event("seeked");
        video.currentTime = target;
        await seeked;
        return { metadataMs, seekedMs: performance.now() - seekBegan, duration: video.duration };
      },
      [url, duration * 0.8] as const,
    );
    expect(times.duration).toBeCloseTo(duration, 0);
    const figures = { probeMs, seekMs, ...times };
    for (const [name, ms] of Object.entries(figures)) {
      if (name !== "duration") expect(ms, `${name} (${url})`).toBeLessThan(OPENS_WITHIN_MS);
    }
    return figures;
  } finally {
    await browser.close();
  }
}
