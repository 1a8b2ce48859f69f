// @ts-check
// How ffprobe and ffmpeg open a source: through the Worker, over HTTP with the job's token (read by
// byte ranges, so no source is ever copied whole to the encoder's disk), and never anything else.
// A source is untrusted bytes. Only demuxers that read one self-contained file are allowed (no
// playlist, concat, image-sequence or subtitle demuxer that would open other resources), only the
// network protocols that reach the Worker are allowed, and once ffprobe has named the format,
// every later run is pinned to it, so a "polyglot" file that one reading takes for a video and
// another for a playlist is read one way only.

/**
 * Demuxers of container formats that hold everything in the one file and carry timestamps a run
 * can seek by. Not here, on purpose: hls, dash, concat, image2 and the image pipes, the subtitle
 * and playlist formats, and anything else that names other files or URLs; and raw elementary
 * streams (h264, hevc, mpegvideo…), which have no timestamps to seek by.
 */
export const ALLOWED_FORMATS = /** @type {const} */ ([
  "mov",
  "matroska",
  "mpegts",
  "mpeg",
  "avi",
  "flv",
  "asf",
  "ogg",
  "mxf",
  "nut",
  "dv",
]);

/**
 * The demuxers an added audio track's file may be read with (docs/audio-tracks.md): every one a
 * video may, and the audio-only files that hold one stream with its own timing in one file (MP3,
 * WAV, FLAC). Still no playlist, and no raw ADTS AAC (no timestamps to seek by).
 */
export const TRACK_FORMATS = /** @type {const} */ ([...ALLOWED_FORMATS, "mp3", "wav", "flac"]);

/** @typedef {readonly string[]} Formats */

/** Protocols a source may be read over: the Worker's callback URL, and nothing local. */
const NETWORK_PROTOCOLS = "http,https,tcp,tls";

/** Microseconds without any data before a read of the source gives up. */
const READ_TIMEOUT_US = 30_000_000;

/** @typedef {{ url: string, token: string }} SourceInput */

/**
 * The demuxer ffprobe names for a format: the first of its names ("mov,mp4,m4a,3gp,3g2,mj2" is
 * read by the "mov" demuxer), or null when it is not one of `allowed` (a video's, by default).
 * @param {string} formatName
 * @param {Formats} [allowed]
 */
export function allowedDemuxer(formatName, allowed = ALLOWED_FORMATS) {
  const names = formatName.split(",");
  return names.some((name) => allowed.includes(name)) ? (names[0] ?? null) : null;
}

/**
 * The input options and the input itself for one run of ffprobe or ffmpeg: `format`, once known,
 * pins the demuxer; none but `allowed` (a video's, by default) may read it.
 * @param {SourceInput} source
 * @param {string | null} format
 * @param {Formats} [allowed]
 * @returns {string[]}
 */
export function sourceInput(source, format, allowed = ALLOWED_FORMATS) {
  return [
    "-protocol_whitelist",
    NETWORK_PROTOCOLS,
    "-format_whitelist",
    allowed.join(","),
    ...(format ? ["-f", format] : []),
    "-rw_timeout",
    String(READ_TIMEOUT_US),
    "-headers",
    `Authorization: Bearer ${source.token}\r\n`,
    "-i",
    source.url,
  ];
}

/**
 * The watermark image, a file the encoder downloaded: PNG or WebP (the Worker accepts no other),
 * told by its first bytes and read with that image's own demuxer, from that one local file.
 * @param {string} file
 * @param {Uint8Array} head the file's first 16 bytes
 * @returns {string[]}
 */
export function imageInput(file, head) {
  const png = head[0] === 0x89 && head[1] === 0x50 && head[2] === 0x4e && head[3] === 0x47;
  const webp =
    String.fromCharCode(...head.slice(0, 4)) === "RIFF" && String.fromCharCode(...head.slice(8, 12)) === "WEBP";
  if (!png && !webp) throw new Error("the watermark is neither PNG nor WebP");
  return ["-protocol_whitelist", "file", "-f", png ? "png_pipe" : "webp_pipe", "-i", file];
}
