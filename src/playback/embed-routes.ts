import { Hono } from "hono";
import { html } from "hono/html";
import type { AppEnv } from "../http/context";
import { ApiError } from "../http/errors";
import { publicOrigin } from "../http/public-url";
import { playableVideo } from "./subject";
import { EMBED_PATH, PLAY_PATH, playbackThumbnailUrl } from "./urls";

/** The player the Worker serves itself, from its static assets (scripts/build-assets.ts): hls.js's light build. */
export const PLAYER_SCRIPT = "/vendor/hls/hls.light.min.js";

/**
 * `GET /embed/<videoId or token>` (contract section 12): a page that plays the video anywhere it is
 * put in an iframe, with nothing loaded from elsewhere. hls.js plays the HLS where the browser has
 * Media Source Extensions; elsewhere (iOS Safari) the browser's own HLS does. The poster shows
 * before playback. A video that cannot be played answers as `/play/` would, as a page.
 */
export const embedRoutes = new Hono<AppEnv>().get(`${EMBED_PATH}/:subject`, async (c) => {
  const subject = c.req.param("subject");
  try {
    const row = await playableVideo(c, subject, { fresh: true });
    const origin = publicOrigin(c);
    const poster = playbackThumbnailUrl(origin, subject);
    const source = `${origin}${PLAY_PATH}/${subject}/master.m3u8`;
    const title = row.title ?? "Video";
    return c.html(
      html`<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8" />
    <meta name="viewport" content="width=device-width, initial-scale=1" />
    <title>${title}</title>
    <style>
      html, body { margin: 0; height: 100%; background: #000; }
      video { display: block; width: 100%; height: 100%; object-fit: contain; }
    </style>
  </head>
  <body>
    <video id="player" controls playsinline preload="none" poster="${poster}" data-src="${source}"></video>
    <script src="${PLAYER_SCRIPT}"></script>
    <script>
      (function () {
        var video = document.getElementById("player");
        var source = video.getAttribute("data-src");
        if (window.Hls && window.Hls.isSupported()) {
          var hls = new window.Hls();
          hls.loadSource(source);
          hls.attachMedia(video);
          window.player = hls;
        } else {
          video.src = source;
        }
      })();
    </script>
  </body>
</html>`,
      200,
      { "cache-control": "no-cache" },
    );
  } catch (error) {
    if (!(error instanceof ApiError)) throw error;
    return c.html(
      html`<!doctype html>
<html lang="en">
  <head><meta charset="utf-8" /><title>${error.message}</title></head>
  <body style="margin:0;display:grid;place-items:center;height:100vh;background:#000;color:#ccc;font:16px system-ui,sans-serif">
    <p data-code="${error.code}">${error.message}</p>
  </body>
</html>`,
      error.status,
      { "cache-control": "no-cache" },
    );
  }
});
