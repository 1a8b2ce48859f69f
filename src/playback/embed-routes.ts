import { Hono } from "hono";
import { html, raw } from "hono/html";
import { originalTrack } from "../audio-tracks/model";
import { trackUrl } from "../captions/model";
import type { AppEnv } from "../http/context";
import { ApiError } from "../http/errors";
import { publicOrigin } from "../http/public-url";
import { frameAncestors } from "../lib/origins";
import { allowedOriginsOf } from "../videos/model";
import { EMBED_PATH, PLAY_PATH, playbackThumbnailUrl } from "../videos/urls";
import { bindsRange } from "./span";
import { withPlayableVideo } from "./state";

/**
 * The player the Worker serves itself, from its static assets (scripts/build-assets.ts bundles
 * it): Media Chrome's controls around hls-video-element (hls.js).
 */
export const PLAYER_SCRIPT = "/vendor/player/player.js";

/**
 * The same player with hls.js's full build, which plays alternate audio renditions: for the pages
 * of videos with added audio tracks (docs/audio-tracks.md). Its own subtitle rendering is turned
 * off (`HLS_AUDIO_CONFIG`): the page's `<track>`s are the captions, as with the light build.
 */
export const PLAYER_AUDIO_SCRIPT = "/vendor/player/player-audio.js";
const HLS_AUDIO_CONFIG = JSON.stringify({ enableWebVTT: false, enableIMSC1: false, enableCEA708Captions: false });

/** The viewing beacons' script (player/beacons.ts): it reports to the `<video>`'s `data-beacons` URL. */
export const BEACONS_SCRIPT = "/vendor/player/beacons.js";

const STYLE = `
  html, body { margin: 0; height: 100%; background: #000; }
  media-controller {
    display: block; width: 100%; height: 100%;
    --media-font-family: system-ui, sans-serif;
    --media-control-background: transparent;
    --media-control-hover-background: rgb(255 255 255 / 0.15);
    --media-range-track-background: rgb(255 255 255 / 0.3);
    --media-primary-color: #fff;
    --media-accent-color: #3ea6ff;
    --media-menu-background: rgb(28 28 28 / 0.92);
    --media-menu-border-radius: 8px;
    /* Room for a language's name; a longer label (up to 100 characters) ends in an ellipsis. */
    --media-settings-menu-min-width: min(16rem, 90vw);
    --media-menu-item-max-width: min(13rem, 70vw);
  }
  hls-video, hls-video > video { display: block; width: 100%; height: 100%; object-fit: contain; }
  hls-video > video::-webkit-media-text-track-container { transition: transform 0.2s ease; }
  /* Captions stay clear of the controls while they show. */
  :is(media-controller:not([userinactive]), media-controller[mediapaused]) video::-webkit-media-text-track-container {
    transform: translateY(-4.5rem);
  }
  media-poster-image { --media-object-fit: contain; }
  media-control-bar { width: 100%; background: rgb(0 0 0 / 0.55); }
  media-control-bar.timeline { background: linear-gradient(transparent, rgb(0 0 0 / 0.55)); padding: 0 8px; box-sizing: border-box; }
  media-time-range { flex-grow: 1; min-width: 0; --media-range-padding: 6px 4px; }
  .spacer { flex-grow: 1; }
  media-settings-menu { max-height: 70%; }
  /* A phone's width keeps the controls a thumb needs; the rest is a keyboard shortcut away. */
  media-controller:not([breakpointmd]) :is(media-volume-range, media-seek-backward-button, media-seek-forward-button, media-pip-button) { display: none; }
  media-controller:not([breakpointsm]) media-time-display { display: none; }
`;

/**
 * The page's framing rule (docs/import-clips-search.md#allowed-origins-allowedorigins): a
 * `frame-ancestors` policy per list that restricts (the video's, the token's), each enforced, so
 * only an origin both allow may frame it; none when any may. Each also allows `ownOrigin`, the
 * origin the service's pages are served from (the same one the origin check of `/play/` and
 * `/embed/` lets through, `checkPlayable`): the dashboard frames every video's player, whatever its
 * allowed origins.
 */
function frameAncestorsHeader(ownOrigin: string, ...lists: string[][]): Record<string, string[]> {
  const policies = lists
    .filter((list) => list.length > 0)
    .map((list) => `frame-ancestors ${frameAncestors(list, ownOrigin)}`);
  return policies.length === 0 ? {} : { "content-security-policy": policies };
}

/**
 * `GET /embed/<videoId or token>` (docs/encoding.md): a player page to put in an iframe,
 * with nothing loaded from elsewhere. Media Chrome gives it its controls: play, seek with
 * storyboard previews on the timeline (`storyboard.vtt`, when the video has one) and, when the video
 * has chapters, the timeline cut into them with the title of the one under the pointer (a
 * `<track kind="chapters" default>`: Media Chrome reads only a default one), volume, time,
 * a settings menu (speed, quality, captions, and audio when the video has more than one audio
 * track: docs/audio-tracks.md), captions on and off, picture-in-picture, fullscreen,
 * and keyboard shortcuts (`?` lists them). hls-video-element plays the HLS with hls.js where the
 * browser has Media Source Extensions, and with the browser's own HLS elsewhere (iOS Safari before
 * 17.1), on the page's own `<video>` (hls-video's media slot). The poster shows until playback
 * starts. Each caption track is a `<track>` of that video, so every browser lists it the same way,
 * from the page's first paint, and plays its cues on the video's own clock. A video that cannot be
 * played answers as `/play/` would, as a page.
 */
export const embedRoutes = new Hono<AppEnv>().get(`${EMBED_PATH}/:subject`, async (c) => {
  const subject = c.req.param("subject");
  try {
    // The video's state as remembered for at most 5 s (docs/playback-at-scale.md), its tracks with it.
    return await withPlayableVideo(c, subject, async ({ row, grant, tracks, audioTracks, chapters }) => {
      const origin = publicOrigin(c);
      // Its own audio and the ready added tracks: a menu to choose between, when there is a choice.
      const audioChoice = (originalTrack(row) ? 1 : 0) + audioTracks.length > 1;
      const withTracks = audioTracks.length > 0;
      const poster = playbackThumbnailUrl(origin, subject);
      const root = `${origin}${PLAY_PATH}/${subject}`;
      const title = row.title ?? "Video";
      return c.html(
        html`<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8" />
    <meta name="viewport" content="width=device-width, initial-scale=1" />
    <title>${title}</title>
    <style>${raw(STYLE)}</style>
  </head>
  <body>
    <media-controller id="player" keyboardforwardseekoffset="5" keyboardbackwardseekoffset="5">
      <hls-video slot="media" src="${root}/master.m3u8">
        <video slot="media" preload="metadata" crossorigin="anonymous" playsinline data-beacons="${root}/beacons">
          ${tracks.map(
            (track) =>
              html`<track kind="subtitles" srclang="${track.language}" label="${track.label}" src="${trackUrl(origin, subject, track.language)}" />`,
          )}
          ${
            // The storyboard shows the whole video: a ranged token has none (docs/import-clips-search.md).
            bindsRange(grant)
              ? ""
              : html`<track kind="metadata" label="thumbnails" src="${root}/storyboard.vtt" default />`
          }
          ${chapters && html`<track kind="chapters" label="Chapters" src="${root}/chapters.vtt" default />`}
        </video>
      </hls-video>
      <media-poster-image slot="poster" src="${poster}"></media-poster-image>
      <media-loading-indicator slot="centered-chrome" noautohide></media-loading-indicator>
      <media-settings-menu hidden anchor="auto">
        <media-settings-menu-item>
          Speed
          <media-playback-rate-menu slot="submenu" hidden rates="0.5 0.75 1 1.25 1.5 1.75 2"><div slot="title">Speed</div></media-playback-rate-menu>
        </media-settings-menu-item>
        <media-settings-menu-item>
          Quality
          <media-rendition-menu slot="submenu" hidden><div slot="title">Quality</div></media-rendition-menu>
        </media-settings-menu-item>
        <media-settings-menu-item>
          Captions
          <media-captions-menu slot="submenu" hidden><div slot="title">Captions</div></media-captions-menu>
        </media-settings-menu-item>
        ${
          audioChoice
            ? html`<media-settings-menu-item>
          Audio
          <media-audio-track-menu slot="submenu" hidden><div slot="title">Audio</div></media-audio-track-menu>
        </media-settings-menu-item>`
            : ""
        }
      </media-settings-menu>
      <media-control-bar class="timeline">
        <media-time-range>
          <media-preview-thumbnail slot="preview"></media-preview-thumbnail>
          <media-preview-chapter-display slot="preview"></media-preview-chapter-display>
          <media-preview-time-display slot="preview"></media-preview-time-display>
        </media-time-range>
      </media-control-bar>
      <media-control-bar>
        <media-play-button></media-play-button>
        <media-seek-backward-button seekoffset="10"></media-seek-backward-button>
        <media-seek-forward-button seekoffset="10"></media-seek-forward-button>
        <media-mute-button></media-mute-button>
        <media-volume-range></media-volume-range>
        <media-time-display showduration></media-time-display>
        <span class="spacer"></span>
        <media-captions-button></media-captions-button>
        <media-settings-menu-button></media-settings-menu-button>
        <media-pip-button></media-pip-button>
        <media-fullscreen-button></media-fullscreen-button>
      </media-control-bar>
    </media-controller>
    <script>
      // A browser without Media Source Extensions plays the HLS itself, and takes the caption
      // tracks from the master playlist's SUBTITLES group: the <track>s would show each one twice.
      if (!window.MediaSource && !window.ManagedMediaSource) {
        document.querySelectorAll("video > track[kind=subtitles]").forEach(function (track) { track.remove(); });
      }
    </script>
    ${
      withTracks
        ? html`<script>
      // hls.js's full build, for the audio tracks: the captions stay the page's <track>s.
      document.querySelector("hls-video").config = ${raw(HLS_AUDIO_CONFIG)};
    </script>`
        : ""
    }
    <script src="${withTracks ? PLAYER_AUDIO_SCRIPT : PLAYER_SCRIPT}"></script>
    <script src="${BEACONS_SCRIPT}"></script>
    <script>
      window.player = document.querySelector("hls-video");
    </script>
  </body>
</html>`,
        200,
        {
          "cache-control": "no-cache",
          ...frameAncestorsHeader(origin, allowedOriginsOf(row), grant.allowedOrigins ?? []),
        },
      );
    });
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
