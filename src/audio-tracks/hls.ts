import { quoted } from "../lib/playlist-text";
import type { AudioTrack, AudioTrackRow } from "./model";

/**
 * Audio tracks in HLS (RFC 8216), as pure functions for whatever serves the master playlist
 * (docs/audio-tracks.md): one `#EXT-X-MEDIA:TYPE=AUDIO` rendition per track in one group, which
 * every variant names. The original has no URI: its audio is in the variants' own segments, as
 * every video's always was, so a player that leaves the group alone plays on as before, and hls.js
 * and Safari switch from it to a track's own playlist and back.
 */

/** The one rendition group of audio tracks; every variant names it. */
export const AUDIO_GROUP = "audio";

/** A track's files, relative to the video's `/play/<x>/` root: named by its generation, so a URL never serves another PUT's bytes. */
export const audioPaths = {
  /** Its media playlist: the video's segments, their durations the video's. */
  playlist: (generation: string) => `audio/${generation}/index.m3u8`,
};

/** Which file of which track a path under `/play/<x>/` names: its playlist, or a segment. */
export type AudioFile =
  | { generation: string; kind: "playlist" }
  | { generation: string; kind: "segment"; name: string };

/** The audio track file `path` names, or null when it names none. */
export function audioFile(path: string): AudioFile | null {
  const match = /^audio\/([0-9A-Z]{26})\/(index\.m3u8|seg_[0-9]{5,6}\.ts)$/.exec(path);
  if (!match) return null;
  const [, generation = "", name = ""] = match;
  return name === "index.m3u8" ? { generation, kind: "playlist" } : { generation, kind: "segment", name };
}

/**
 * The master playlist's audio renditions: the original first (when the video has its own audio),
 * `DEFAULT=YES` with no URI; then each ready track, `DEFAULT=NO`, with the URI of its playlist and
 * `query` (a clip's range, which its playlist cuts as the variants' are). None without a ready
 * track: the master is then as it always was.
 */
export function audioRenditions(
  original: AudioTrack | null,
  tracks: readonly Pick<AudioTrackRow, "language" | "label" | "generation">[],
  query: string,
): string[] {
  if (tracks.length === 0) return [];
  const line = (track: { language: string; label: string }, isDefault: boolean) =>
    `#EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID=${quoted(AUDIO_GROUP)},NAME=${quoted(track.label)},` +
    `LANGUAGE=${quoted(track.language)},AUTOSELECT=YES,DEFAULT=${isDefault ? "YES" : "NO"}`;
  return [
    ...(original ? [line(original, true)] : []),
    ...tracks.map((track) => `${line(track, false)},URI=${quoted(audioPaths.playlist(track.generation) + query)}`),
  ];
}
