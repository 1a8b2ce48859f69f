/**
 * Every R2 key the service writes is built here, and nowhere else (docs/storage.md). A video's
 * objects all live under its own prefix, so listing or removing that prefix is the whole of them;
 * a project's live under its video prefixes and its own.
 */

/** Everything of one video: its source, its thumbnails, and (with encoding) its outputs. */
export function videoPrefix(projectId: string, videoId: string): string {
  return `videos/${projectId}/${videoId}/`;
}

/** The uploaded source, assembled by an R2 multipart upload. */
export function sourceKey(projectId: string, videoId: string): string {
  return `${videoPrefix(projectId, videoId)}source`;
}

/** The automatic poster frame, written by the encoding pipeline. */
export function posterKey(projectId: string, videoId: string): string {
  return `${videoPrefix(projectId, videoId)}poster.jpg`;
}

/**
 * Everything one encoding attempt wrote, for videos encoded before segments were made one by one:
 * their outputs are still served from here (`videos.output_attempt`).
 */
export function encodePrefix(projectId: string, videoId: string, attempt: number): string {
  return `${videoPrefix(projectId, videoId)}encodes/${attempt}/`;
}

/** One output file of an attempt (`path` as the encoder names it: `master.m3u8`, `720p/seg_00001.ts`…). */
export function encodeOutputKey(projectId: string, videoId: string, attempt: number, path: string): string {
  return `${encodePrefix(projectId, videoId, attempt)}${path}`;
}

/** One HLS segment of a rendition (`seg_NNNNN.ts`): stored once, when it is first made, then never changed. */
export function segmentKey(projectId: string, videoId: string, resolution: string, name: string): string {
  return `${videoPrefix(projectId, videoId)}hls/${resolution}/${name}`;
}

/**
 * A frame of the video at a width (docs/encoding.md#frames-and-the-storyboard): made when first
 * asked for, then kept.
 */
export function frameKey(projectId: string, videoId: string, frame: number, width: number): string {
  return `${videoPrefix(projectId, videoId)}frames/${frame}-${width}.jpg`;
}

/** The storyboard's sprite (its WebVTT is made from the plan when asked for). */
export function storyboardKey(projectId: string, videoId: string): string {
  return `${videoPrefix(projectId, videoId)}storyboard.jpg`;
}

/** The MP4 of the highest rendition, put together from its segments (an R2 multipart upload). */
export function mp4Key(projectId: string, videoId: string): string {
  return `${videoPrefix(projectId, videoId)}video.mp4`;
}

/** The M4A: the AAC of the lowest rendition's segments, audio only (an R2 multipart upload, docs/audio-only.md). */
export function m4aKey(projectId: string, videoId: string): string {
  return `${videoPrefix(projectId, videoId)}audio.m4a`;
}

/** The video's own copy of the watermark image its encoding settings named. */
export function watermarkCopyKey(projectId: string, videoId: string): string {
  return `${videoPrefix(projectId, videoId)}watermark`;
}

/** A custom thumbnail: a new name for every upload, so its URL can be cached forever. */
export function customThumbnailKey(projectId: string, videoId: string, name: string): string {
  return `${videoPrefix(projectId, videoId)}thumbnails/${name}`;
}

/** A caption track's WebVTT: a new name for every upload, so a replaced track's object can go. */
export function captionsKey(projectId: string, videoId: string, name: string): string {
  return `${videoPrefix(projectId, videoId)}captions/${name}`;
}

/**
 * The words heard in one generation of a caption track (JSON), from the coordinator that heard them
 * to the captions that make the track of them; removed once the track is made.
 */
export function heardWordsKey(projectId: string, videoId: string, generation: string): string {
  return `${videoPrefix(projectId, videoId)}speech/${generation}.json`;
}

/**
 * Everything of one generation of an added audio track (one PUT of its language,
 * docs/audio-tracks.md): the file as it was sent and its segments. A replaced or deleted track's
 * objects go as this prefix; a new PUT is a new generation, so a URL never serves another's bytes.
 */
export function audioTrackPrefix(projectId: string, videoId: string, generation: string): string {
  return `${videoPrefix(projectId, videoId)}audio/${generation}/`;
}

/** An added audio track's file, as it was sent (its segments are made from it). */
export function audioTrackSourceKey(projectId: string, videoId: string, generation: string): string {
  return `${audioTrackPrefix(projectId, videoId, generation)}source`;
}

/** One segment of an added audio track (`seg_NNNNN.ts`): stored once, then never changed. */
export function audioTrackSegmentKey(projectId: string, videoId: string, generation: string, name: string): string {
  return `${audioTrackPrefix(projectId, videoId, generation)}${name}`;
}

/** A project's watermark image: a new name for every upload. */
export function watermarkKey(projectId: string, name: string): string {
  return `projects/${projectId}/watermarks/${name}`;
}

/**
 * Where thumbnails and watermarks were written before every object moved under its video's (or
 * project's) prefix. Objects written there keep working: their keys are stored with the rows
 * that point at them, and the public thumbnail route falls back to it.
 */
export function legacyThumbnailKey(projectId: string, videoId: string, file: string): string {
  return `thumbnails/${projectId}/${videoId}/${file}`;
}

/** Every prefix under which a project's objects live, the legacy ones included. */
export function projectPrefixes(projectId: string): string[] {
  return [`videos/${projectId}/`, `projects/${projectId}/`, `thumbnails/${projectId}/`, `watermarks/${projectId}/`];
}

/**
 * The key a public thumbnail URL's file names under the current layout: `poster.jpg` is the
 * automatic poster, any other file a custom thumbnail.
 */
export function thumbnailKeyForFile(projectId: string, videoId: string, file: string): string {
  return file === "poster.jpg" ? posterKey(projectId, videoId) : customThumbnailKey(projectId, videoId, file);
}

/** The `{projectId}/{videoId}/{file}` a thumbnail key is served under, whichever layout wrote it. */
export function thumbnailUrlPath(key: string): string {
  const parts = key.split("/");
  // videos/{p}/{v}/poster.jpg, videos/{p}/{v}/thumbnails/{file}, or legacy thumbnails/{p}/{v}/{file}
  const [, projectId, videoId] = parts;
  return `${projectId}/${videoId}/${parts.at(-1)}`;
}
