// The embed page's viewing beacons (docs/analytics.md), bundled by scripts/build-assets.ts into
// /vendor/player/beacons.js. The page marks its <video> with `data-beacons="<…>/play/<x>/beacons"`;
// this script reports the view there: `start` at the first play, `heartbeat` every 10 s while
// playing and at each rendition change or error, `end` when the page goes away (sendBeacon).
// Totals only (watch time, rebuffering so far), so a beacon sent twice or late counts once.

import { HEARTBEAT_MS } from "../src/analytics/heartbeat";

type BeaconEvent = "start" | "heartbeat" | "end";

/** 24 URL-safe random characters: the view's id, new for every page load. */
function newViewId(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(18));
  return btoa(String.fromCharCode(...bytes))
    .replace(/\+/g, "-")
    .replace(/\//g, "_");
}

/** What a view has done so far, on the page's own monotonic clock. */
class ViewClock {
  #watchedMs = 0;
  #playingSince: number | null = null;
  #rebufferMs = 0;
  #stalledSince: number | null = null;
  rebufferCount = 0;

  playing(now: number): void {
    this.resumed(now);
    this.#playingSince ??= now;
  }

  stopped(now: number): void {
    if (this.#playingSince !== null) this.#watchedMs += now - this.#playingSince;
    this.#playingSince = null;
  }

  stalled(now: number): void {
    this.stopped(now);
    if (this.#stalledSince !== null) return;
    this.rebufferCount += 1;
    this.#stalledSince = now;
  }

  resumed(now: number): void {
    if (this.#stalledSince !== null) this.#rebufferMs += now - this.#stalledSince;
    this.#stalledSince = null;
  }

  totals(now: number) {
    return {
      watchedMs: Math.round(this.#watchedMs + (this.#playingSince === null ? 0 : now - this.#playingSince)),
      rebufferMs: Math.round(this.#rebufferMs + (this.#stalledSince === null ? 0 : now - this.#stalledSince)),
    };
  }
}

function reportViews(video: HTMLVideoElement, url: string): void {
  const viewId = newViewId();
  const clock = new ViewClock();
  let intentAt: number | null = null;
  let startupMs: number | undefined;
  let rendition: string | undefined;
  let error: string | undefined;
  let timer: ReturnType<typeof setInterval> | undefined;
  const now = () => performance.now();

  const send = (event: BeaconEvent) => {
    const body: Record<string, unknown> = {
      viewId,
      event,
      playheadSeconds: Math.max(0, Math.round((video.currentTime || 0) * 1000) / 1000),
      ...clock.totals(now()),
      rebufferCount: clock.rebufferCount,
    };
    if (event !== "start" && startupMs !== undefined) body.startupMs = startupMs;
    if (rendition) body.rendition = rendition;
    if (error) body.error = error;
    const payload = JSON.stringify(body);
    if (event === "end") {
      navigator.sendBeacon(url, new Blob([payload], { type: "application/json" }));
      return;
    }
    void fetch(url, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: payload,
      keepalive: true,
    }).catch(() => {});
  };

  video.addEventListener("play", () => {
    if (intentAt !== null) return;
    intentAt = now();
    send("start");
    timer = setInterval(() => {
      if (!video.paused) send("heartbeat");
    }, HEARTBEAT_MS);
  });
  video.addEventListener("playing", () => {
    if (intentAt === null) return;
    // The first moving frame: the first `playing` after the play intent.
    startupMs ??= Math.round(now() - intentAt);
    clock.playing(now());
  });
  for (const type of ["pause", "ended", "seeking"]) video.addEventListener(type, () => clock.stopped(now()));
  video.addEventListener("waiting", () => {
    // A stall after the first frame, not one a seek asked for, is rebuffering.
    if (startupMs === undefined || video.seeking) clock.stopped(now());
    else clock.stalled(now());
  });
  video.addEventListener("resize", () => {
    if (video.videoWidth === 0 || video.videoHeight === 0) return;
    const label = `${Math.min(video.videoWidth, video.videoHeight)}p`;
    if (label === rendition) return;
    // What played until now played at the rendition before: report it under that one.
    if (rendition !== undefined && intentAt !== null) send("heartbeat");
    rendition = label;
  });
  video.addEventListener("error", () => {
    const failure = video.error;
    error = (failure?.message || `media error ${failure?.code ?? "unknown"}`).slice(0, 200);
    if (intentAt !== null) send("heartbeat");
  });
  window.addEventListener("pagehide", () => {
    if (intentAt === null) return;
    clearInterval(timer);
    send("end");
    intentAt = null;
  });
}

const video = document.querySelector<HTMLVideoElement>("video[data-beacons]");
const url = video?.dataset.beacons;
if (video && url) reportViews(video, url);
