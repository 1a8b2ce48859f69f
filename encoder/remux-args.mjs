// @ts-check
// The ffmpeg arguments of the files put together from a video's stored segments (the MP4 and the
// M4A): a remux, copying what the segments hold without encoding anything again. The encodes'
// arguments are in ffmpeg-args.mjs.

/**
 * The ffmpeg arguments of a remux of segments fed on standard input one after the other (MPEG-TS),
 * without encoding anything again (ADTS AAC to MP4's), without metadata: `protocols` ffmpeg may
 * open, the streams it keeps (`select`), then the container and where it goes (`output`).
 * @param {string} protocols @param {string[]} select @param {string[]} output
 */
function remuxArgs(protocols, select, output) {
  return [
    "-hide_banner",
    "-nostdin",
    "-v",
    "error",
    "-protocol_whitelist",
    protocols,
    "-f",
    "mpegts",
    "-i",
    "pipe:0",
    ...select,
    "-bsf:a",
    "aac_adtstoasc",
    "-map_metadata",
    "-1",
    ...output,
  ];
}

/**
 * The ffmpeg arguments that put the highest rendition's segments into one MP4 on standard output:
 * a fragmented MP4 (the moov first, then a fragment per keyframe), which needs no seeking back and
 * so streams out in parts of any size.
 * @returns {string[]}
 */
export function mp4Args() {
  return remuxArgs(
    "pipe",
    ["-map", "0:v", "-map", "0:a?", "-c", "copy"],
    ["-movflags", "+frag_keyframe+empty_moov+default_base_moof", "-f", "mp4", "pipe:1"],
  );
}

/**
 * The ffmpeg arguments that copy the segments' audio into an M4A `file`: no video, its `moov`
 * moved to the front once written (`faststart`, which reads the file back: hence `file`).
 * @param {string} file
 * @returns {string[]}
 */
export function m4aArgs(file) {
  return remuxArgs(
    "pipe,file",
    ["-map", "0:a:0", "-vn", "-c:a", "copy"],
    ["-movflags", "+faststart", "-f", "ipod", "-y", file],
  );
}
