// @ts-check
// The HLS master playlist, written by the encoder from what ffmpeg produced (pure): one variant
// per rendition with its measured BANDWIDTH, RESOLUTION and CODECS, by relative URI.

/** @typedef {import("./ladder.mjs").Rendition} Rendition */
/** @typedef {{ duration: number, uri: string }} Segment */
/**
 * @typedef {{
 *   rendition: Rendition,
 *   uri: string,
 *   bandwidth: number,
 *   averageBandwidth: number,
 *   codecs: string,
 * }} Variant
 */

/**
 * The segments of a VOD media playlist, in order; throws when it is not a finished one.
 * @param {string} text
 * @returns {Segment[]}
 */
export function parseMediaPlaylist(text) {
  const lines = text.split(/\r?\n/).map((line) => line.trim());
  if (lines[0] !== "#EXTM3U") throw new Error("not an M3U8 playlist");
  if (!lines.includes("#EXT-X-ENDLIST")) throw new Error("the playlist has no #EXT-X-ENDLIST");
  /** @type {Segment[]} */
  const segments = [];
  let duration = null;
  for (const line of lines) {
    const extinf = /^#EXTINF:([0-9.]+)/.exec(line);
    if (extinf) duration = Number(extinf[1]);
    else if (line && !line.startsWith("#")) {
      if (duration === null) throw new Error(`segment ${line} has no #EXTINF`);
      if (line.includes("/") || line.includes(":")) throw new Error(`segment URI ${line} is not a sibling file`);
      segments.push({ duration, uri: line });
      duration = null;
    }
  }
  if (segments.length === 0) throw new Error("the playlist has no segment");
  return segments;
}

// A last segment shorter than this (one keyframe, a fraction of a second) would make the peak
// look many times the real one, and players pick variants by it.
const SHORTEST_PEAK_SEGMENT = 1;

/**
 * BANDWIDTH (the peak segment bit rate) and AVERAGE-BANDWIDTH of a variant, in bits per second.
 * @param {{ duration: number, bytes: number }[]} segments
 */
export function bandwidth(segments) {
  const totalBytes = segments.reduce((sum, s) => sum + s.bytes, 0);
  const totalSeconds = segments.reduce((sum, s) => sum + s.duration, 0);
  const average = totalSeconds > 0 ? (8 * totalBytes) / totalSeconds : 0;
  const long = segments.filter((s) => s.duration >= SHORTEST_PEAK_SEGMENT);
  const peak = long.length > 0 ? Math.max(...long.map((s) => (8 * s.bytes) / s.duration)) : average;
  return { peak: Math.ceil(Math.max(peak, average)), average: Math.ceil(average) };
}

const PROFILES = /** @type {Record<string, string>} */ ({
  "Constrained Baseline": "42e0",
  Baseline: "4200",
  Main: "4d40",
  High: "6400",
});

/**
 * The CODECS value (RFC 6381) of an H.264 stream with `profile` and `level` as ffprobe names
 * them (for example "High" and 31), with AAC-LC audio when `hasAudio`.
 * @param {{ profile: string, level: number }} video
 * @param {boolean} hasAudio
 */
export function codecs(video, hasAudio) {
  const profile = PROFILES[video.profile];
  if (!profile || !Number.isInteger(video.level) || video.level <= 0 || video.level > 255) {
    throw new Error(`no CODECS for H.264 profile ${video.profile} level ${video.level}`);
  }
  const avc = `avc1.${profile}${video.level.toString(16).padStart(2, "0")}`;
  return hasAudio ? `${avc},mp4a.40.2` : avc;
}

/**
 * @param {Variant[]} variants lowest first
 * @returns {string}
 */
export function masterPlaylist(variants) {
  const lines = ["#EXTM3U", "#EXT-X-VERSION:3", "#EXT-X-INDEPENDENT-SEGMENTS"];
  for (const v of variants) {
    const attributes = [
      `BANDWIDTH=${v.bandwidth}`,
      `AVERAGE-BANDWIDTH=${v.averageBandwidth}`,
      `RESOLUTION=${v.rendition.width}x${v.rendition.height}`,
      `CODECS="${v.codecs}"`,
    ];
    lines.push(`#EXT-X-STREAM-INF:${attributes.join(",")}`, v.uri);
  }
  return `${lines.join("\n")}\n`;
}
