import { audioBandwidth, codecs, type Plan, segmentCount, segmentSeconds } from "../../media-plan/plan.mjs";
import { segmentName } from "../../media-plan/protocol.mjs";
import { AUDIO_GROUP } from "../audio-tracks/hls";
import { playlistText, quoted } from "../lib/playlist-text";

/**
 * The HLS playlists of a video, from its encoding plan alone
 * (docs/encoding.md#long-videos-playable-in-seconds): complete from the moment the video is
 * playable, before any segment exists, and the same bytes before and after it is ready. Pure. Every
 * value from the plan passes lib/playlist-text.ts's check.
 */

/** A rendition's variant playlist, by relative URI from the master. */
export function variantUri(resolution: string): string {
  return `${playlistText(resolution)}/index.m3u8`;
}

/**
 * The master playlist: one variant per rendition, lowest first, with the BANDWIDTH no segment
 * exceeds, its RESOLUTION, CODECS and FRAME-RATE. With audio renditions (`audio`, the
 * `#EXT-X-MEDIA` lines of the video's added audio tracks, docs/audio-tracks.md), those come first
 * and every variant names their group: its BANDWIDTH then counts a track's segments beside its
 * own, and its CODECS the AAC a track brings to a silent video.
 */
export function masterPlaylist(plan: Plan, variantQuery = "", audio: readonly string[] = []): string {
  const rate = (plan.frameRate.num / plan.frameRate.den).toFixed(3);
  const lines = ["#EXTM3U", "#EXT-X-VERSION:3", "#EXT-X-INDEPENDENT-SEGMENTS", ...audio];
  const withAudio = audio.length > 0;
  for (const r of plan.renditions) {
    const bandwidth = r.bandwidth + (withAudio ? audioBandwidth() : 0);
    const codec = withAudio ? codecs(r.level, true) : r.codecs;
    const group = withAudio ? `,AUDIO=${quoted(AUDIO_GROUP)}` : "";
    lines.push(
      `#EXT-X-STREAM-INF:BANDWIDTH=${bandwidth},RESOLUTION=${r.width}x${r.height},CODECS=${quoted(codec)},FRAME-RATE=${rate}${group}`,
      playlistText(`${variantUri(r.resolution)}${variantQuery}`),
    );
  }
  return `${lines.join("\n")}\n`;
}

/**
 * A rendition's variant playlist: VOD, every segment listed with its exact duration (a whole
 * number of frames), so a player may start or seek anywhere at once; for a clip
 * (docs/import-clips-search.md#clips-without-encoding), the segments from `first` to `last` only,
 * its media sequence starting at `first`.
 */
export function variantPlaylist(plan: Plan, segments = { first: 0, last: segmentCount(plan) - 1 }): string {
  const indexes = Array.from({ length: segments.last - segments.first + 1 }, (_, i) => segments.first + i);
  const durations = indexes.map((index) => segmentSeconds(plan, index));
  const target = Math.max(1, Math.round(Math.max(...durations)));
  const lines = [
    "#EXTM3U",
    "#EXT-X-VERSION:3",
    `#EXT-X-TARGETDURATION:${target}`,
    `#EXT-X-MEDIA-SEQUENCE:${segments.first}`,
    "#EXT-X-PLAYLIST-TYPE:VOD",
    "#EXT-X-INDEPENDENT-SEGMENTS",
  ];
  durations.forEach((seconds, i) => {
    lines.push(`#EXTINF:${seconds.toFixed(6)},`, playlistText(segmentName(segments.first + i)));
  });
  lines.push("#EXT-X-ENDLIST");
  return `${lines.join("\n")}\n`;
}
