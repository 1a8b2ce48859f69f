import { closeSync, mkdtempSync, openSync, readdirSync, readSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { DatabaseSync } from "node:sqlite";
import type { components } from "../../api-client/api.d.ts";
import { resolveBinaries, runBinary } from "../../encoder/binaries.mjs";
import { ffprobeJson, makeClip, writeClip } from "../../encoder/test/media.mjs";
import type { keyedTenant } from "./client.ts";

/** The ffmpeg and ffprobe the encoder uses here (the system's, else the npm-packaged ones). */
export const binaries = await resolveBinaries();
const scratch = mkdtempSync(path.join(tmpdir(), "video-api-media-"));
let made = 0;

/** A test-pattern clip made now by ffmpeg (no media fixtures in the repo). */
export function clip(options: { width: number; height: number; seconds: number; audio?: boolean; extra?: string[] }) {
  return makeClip(binaries.ffmpeg, path.join(scratch, `clip-${made++}.mp4`), options).then(
    (buffer) => new Uint8Array(buffer),
  );
}

/** ffprobe's JSON of a file or URL. */
export function probe(target: string, extra?: string[]) {
  return ffprobeJson(binaries.ffprobe, target, extra);
}

/**
 * Runs the encoder's ffmpeg (never a bare `ffmpeg` from the PATH: a machine without the system's
 * has only the npm-packaged one, started with the environment it needs); throws with its last
 * lines when it fails.
 */
export async function ffmpeg(args: string[]) {
  const run = await runBinary(binaries.ffmpeg, ["-hide_banner", "-nostdin", ...args], { timeoutMs: 120_000 });
  if (run.code !== 0)
    throw new Error(`ffmpeg ${args.join(" ")}: ${run.stderr.trim().split("\n").slice(-3).join(" | ")}`);
}

export type Video = components["schemas"]["Video"];
type Call = Awaited<ReturnType<typeof keyedTenant>>["call"];

/** Creates a video and uploads `bytes` as its source in one part; returns the video as completed. */
export async function uploadVideo(call: Call, bytes: Uint8Array, body: Record<string, unknown> = {}) {
  const created = await call("POST", "/v1/videos", body);
  if (created.status !== 201) throw new Error(`create: ${created.status} ${created.text}`);
  const id = created.json.video.id as string;
  const part = await call("PUT", `/v1/videos/${id}/upload/parts/1`, bytes);
  if (part.status !== 200) throw new Error(`part: ${part.status} ${part.text}`);
  const complete = await call("POST", `/v1/videos/${id}/upload/complete`, {
    parts: [{ partNumber: 1, etag: part.json.etag }],
  });
  if (complete.status !== 200) throw new Error(`complete: ${complete.status} ${complete.text}`);
  return complete.json as { id: string; status: string };
}

/** R2's rule: every part but the last one size, at least 5 MiB; no request over 50 MiB here. */
export const UPLOAD_PART_BYTES = 32 * 1024 * 1024;

/**
 * Creates a video and uploads the file at `file` as its source in parts of UPLOAD_PART_BYTES,
 * reading one part at a time; returns the video as completed, and when the completion answered.
 */
export async function uploadFile(call: Call, file: string, body: Record<string, unknown> = {}) {
  const created = await call("POST", "/v1/videos", body);
  if (created.status !== 201) throw new Error(`create: ${created.status} ${created.text}`);
  const id = created.json.video.id as string;
  const size = statSync(file).size;
  const fd = openSync(file, "r");
  const parts: { partNumber: number; etag: string }[] = [];
  try {
    for (let offset = 0, partNumber = 1; offset < size; offset += UPLOAD_PART_BYTES, partNumber++) {
      const bytes = new Uint8Array(Math.min(UPLOAD_PART_BYTES, size - offset));
      readSync(fd, bytes, 0, bytes.byteLength, offset);
      const part = await call("PUT", `/v1/videos/${id}/upload/parts/${partNumber}`, bytes);
      if (part.status !== 200) throw new Error(`part ${partNumber}: ${part.status} ${part.text}`);
      parts.push({ partNumber, etag: part.json.etag as string });
    }
  } finally {
    closeSync(fd);
  }
  const complete = await call("POST", `/v1/videos/${id}/upload/complete`, { parts });
  if (complete.status !== 200) throw new Error(`complete: ${complete.status} ${complete.text}`);
  return { video: complete.json as { id: string; status: string }, completedAt: Date.now() };
}

/** A long test-pattern clip with a tone, made quickly (ultrafast) in the scratch folder; its path. */
export async function longClip(options: { width: number; height: number; seconds: number; rate?: number }) {
  const file = path.join(scratch, `long-${made++}.mp4`);
  await writeClip(binaries.ffmpeg, file, { ...options, extra: ["-g", String(2 * (options.rate ?? 25))] });
  return file;
}

/**
 * A long source made in seconds: two seconds of a tiny test pattern (30 fps, a keyframe each
 * second, no audio) repeated without encoding again, `seconds` long. Its index is as large as any
 * video's of that many frames (10 hours: 1.08 million, a 13 MB moov), which is what a picture of
 * it costs to seek: its path in the scratch folder.
 */
export async function loopedClip(seconds: number) {
  const piece = path.join(scratch, `piece-${made++}.mp4`);
  await ffmpeg(
    ["-v", "error", "-y", "-f", "lavfi", "-i", "testsrc2=s=64x36:r=30:d=2"].concat([
      "-c:v",
      "libx264",
      "-preset",
      "ultrafast",
      "-g",
      "30",
      "-pix_fmt",
      "yuv420p",
      "-f",
      "mp4",
      piece,
    ]),
  );
  const file = path.join(scratch, `looped-${made++}.mp4`);
  await ffmpeg([
    "-v",
    "error",
    "-y",
    "-stream_loop",
    String(seconds / 2 - 1),
    "-i",
    piece,
    "-c",
    "copy",
    "-f",
    "mp4",
    file,
  ]);
  return file;
}

/** Polls the video until its status is one of `statuses`; returns it. */
export async function waitForStatus(call: Call, id: string, statuses: string[], seconds = 60): Promise<Video> {
  const deadline = Date.now() + seconds * 1000;
  let last: Video | undefined;
  while (Date.now() < deadline) {
    last = (await call("GET", `/v1/videos/${id}`)).json as Video;
    if (statuses.includes(last?.status)) return last;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error(`video ${id} not ${statuses.join("/")} within ${seconds} s: ${JSON.stringify(last)}`);
}

/** Polls the video until it is playable (`playback.hls` set) or errored; returns it. */
export async function waitForPlayable(call: Call, id: string, seconds = 30): Promise<Video> {
  const deadline = Date.now() + seconds * 1000;
  let last: Video | undefined;
  while (Date.now() < deadline) {
    last = (await call("GET", `/v1/videos/${id}`)).json as Video;
    if (last?.playback?.hls || last?.status === "errored") return last;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`video ${id} not playable within ${seconds} s: ${JSON.stringify(last)}`);
}

/**
 * The keys the dev server's local R2 holds under `prefix`, read from its persisted state (Miniflare
 * keeps each bucket's objects in a SQLite table): what a test cannot see over HTTP.
 */
export function storedKeys(persistTo: string, prefix: string): string[] {
  const dir = path.join(persistTo, "v3/r2/miniflare-R2BucketObject");
  return readdirSync(dir)
    .filter((file) => file.endsWith(".sqlite") && file !== "metadata.sqlite")
    .flatMap((file) => {
      const db = new DatabaseSync(path.join(dir, file), { readOnly: true });
      try {
        const rows = db.prepare("SELECT key FROM _mf_objects WHERE key LIKE ? || '%'").all(prefix);
        return rows.map((row) => String(row.key));
      } finally {
        db.close();
      }
    });
}
