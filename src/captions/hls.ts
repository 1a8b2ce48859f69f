import { isQuotedString, playlistText, quoted } from "../lib/playlist-text";
import { LINE_TERMINATOR, withoutBom } from "./webvtt";

/**
 * Caption tracks in HLS (docs/captions-and-embed.md, RFC 8216), as pure functions of text, for
 * whatever serves the master playlist: a SUBTITLES rendition group in the master, a VOD subtitle
 * playlist per track, and the WebVTT segment that playlist names.
 */

/** What the master playlist says of a track. */
export type SubtitleTrack = { language: string; label: string };

/** The one rendition group of caption tracks; every variant names it. */
export const SUBTITLES_GROUP = "subs";

/** A track's files, relative to the video's `/play/<x>/` root. */
export const captionPaths = {
  /** The track itself, as stored (`text/vtt`). */
  track: (language: string) => `captions/${language}.vtt`,
  /** Its VOD subtitle playlist, which the master's EXT-X-MEDIA names. */
  playlist: (language: string) => `captions/${language}.m3u8`,
  /** The playlist's one segment: the track with HLS's X-TIMESTAMP-MAP (see subtitleSegment). */
  segment: (language: string) => `captions/${segmentOfPlaylist(language)}`,
};

/** The segment's URI as the subtitle playlist names it, relative to the playlist. */
export function segmentOfPlaylist(language: string): string {
  return `${language}/seg_00000.vtt`;
}

/** The attributes of a tag's attribute list, in order, each as written (`NAME=value`). */
function attributes(list: string): string[] {
  return list.match(/[A-Z0-9-]+=(?:"[^"]*"|[^,]*)/g) ?? [];
}

const isOurGroup = (line: string) =>
  line.startsWith("#EXT-X-MEDIA:") &&
  attributes(line.slice("#EXT-X-MEDIA:".length)).includes("TYPE=SUBTITLES") &&
  attributes(line.slice("#EXT-X-MEDIA:".length)).includes(`GROUP-ID=${quoted(SUBTITLES_GROUP)}`);

/**
 * The master playlist with the video's caption tracks: one `#EXT-X-MEDIA:TYPE=SUBTITLES` per track
 * (in the order given), before the first variant, and `SUBTITLES="subs"` on every
 * `#EXT-X-STREAM-INF`. Without tracks, the master as it is. A group this function added before is
 * replaced, so applying it twice is applying it once. A track whose label or language may not stand
 * in a playlist (stored before labels were checked as they are now) is left out, never written.
 */
export function withSubtitles(master: string, all: readonly SubtitleTrack[]): string {
  const tracks = all.filter((track) => isQuotedString(track.label) && isQuotedString(track.language));
  if (tracks.length === 0) return master;
  const media = tracks.map(
    (track) =>
      `#EXT-X-MEDIA:TYPE=SUBTITLES,GROUP-ID=${quoted(SUBTITLES_GROUP)},NAME=${quoted(track.label)},` +
      `LANGUAGE=${quoted(track.language)},AUTOSELECT=YES,DEFAULT=NO,URI=${quoted(captionPaths.playlist(track.language))}`,
  );
  const lines = master.split(LINE_TERMINATOR).filter((line) => !isOurGroup(line));
  if (lines.at(-1) === "") lines.pop();
  const out: string[] = [];
  for (const line of lines) {
    if (line.startsWith("#EXT-X-STREAM-INF:")) {
      if (media.length > 0) out.push(...media.splice(0));
      const kept = attributes(line.slice("#EXT-X-STREAM-INF:".length)).filter((a) => !a.startsWith("SUBTITLES="));
      out.push(`#EXT-X-STREAM-INF:${[...kept, `SUBTITLES=${quoted(SUBTITLES_GROUP)}`].join(",")}`);
    } else {
      out.push(line);
    }
  }
  out.push(...media);
  return `${out.join("\n")}\n`;
}

/**
 * A track's VOD subtitle playlist for a video of `duration` seconds: one WebVTT segment, `uri`,
 * lasting the whole video, so the segments add up to its duration. A caption file is at most 2 MiB,
 * so a player fetching all of it at once fetches little.
 */
export function subtitlePlaylist(duration: number, uri: string): string {
  if (!Number.isFinite(duration) || duration <= 0)
    throw new RangeError(`no subtitle playlist for duration ${duration}`);
  return [
    "#EXTM3U",
    "#EXT-X-VERSION:3",
    `#EXT-X-TARGETDURATION:${Math.ceil(duration)}`,
    "#EXT-X-MEDIA-SEQUENCE:0",
    "#EXT-X-PLAYLIST-TYPE:VOD",
    `#EXTINF:${duration.toFixed(3)},`,
    playlistText(uri),
    "#EXT-X-ENDLIST",
    "",
  ].join("\n");
}

/**
 * The WebVTT segment of a subtitle playlist: the track with `X-TIMESTAMP-MAP` in its header, which
 * ties cue time 0 to the MPEG-TS timestamp `mpegts` (90 kHz) of the video's segments (RFC 8216
 * §3.5). Without it a player takes cue time 0 for timestamp 0, and shows every cue as much too
 * early as the video's timeline starts late (1.4 s for ffmpeg's segments). Any X-TIMESTAMP-MAP the
 * track held is replaced; lines end in LF.
 */
export function subtitleSegment(vtt: string, mpegts: number): string {
  if (!Number.isSafeInteger(mpegts) || mpegts < 0) throw new RangeError(`bad MPEG-TS timestamp ${mpegts}`);
  const lines = withoutBom(vtt).split(LINE_TERMINATOR);
  const headerEnd = lines.indexOf("");
  const header = (headerEnd < 0 ? lines : lines.slice(0, headerEnd)).filter(
    (line, i) => i === 0 || !line.startsWith("X-TIMESTAMP-MAP="),
  );
  const rest = headerEnd < 0 ? [""] : lines.slice(headerEnd);
  const map = `X-TIMESTAMP-MAP=MPEGTS:${mpegts},LOCAL:00:00:00.000`;
  return [header[0] ?? "WEBVTT", map, ...header.slice(1), ...rest].join("\n");
}
