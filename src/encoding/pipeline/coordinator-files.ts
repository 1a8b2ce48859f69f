import { m4aKey, mp4Key } from "../../lib/storage-keys";
import type { EncodingStore } from "./coordinator-store";

/**
 * The files a video's coordinator has put together from its stored segments, each an R2 multipart
 * upload the encoder's jobs fill a part each (callback-routes.ts; media-plan/PROTOCOL.md, "Files in
 * parts"): the MP4 (docs/encoding.md#renditions-and-the-watermark, when `plan.mp4`) and the M4A
 * (docs/audio-only.md, when `plan.audio`). The upload, its parts made, and whether the file is
 * complete are kept in the coordinator's store (`<kind>`, `fileParts`, `<kind>Done`).
 */
export type FileKind = "mp4" | "m4a";
export type Upload = { key: string; uploadId: string };
type Video = { projectId: string; videoId: string };

const FILES: Record<FileKind, { key: (projectId: string, videoId: string) => string; type: string }> = {
  mp4: { key: mp4Key, type: "video/mp4" },
  m4a: { key: m4aKey, type: "audio/mp4" },
};

export function isFileKind(kind: string): kind is FileKind {
  return kind === "mp4" || kind === "m4a";
}

/** The file's upload: one, its parts written a job at a time (a failed job writes its part again), until it completes or the encoding ends without it. */
export async function openUpload(store: EncodingStore, media: R2Bucket, kind: FileKind, video: Video): Promise<Upload> {
  const open = store.get<Upload>(kind);
  if (open) return open;
  const file = FILES[kind];
  const key = file.key(video.projectId, video.videoId);
  const upload = await media.createMultipartUpload(key, { httpMetadata: { contentType: file.type } });
  const opened = { key, uploadId: upload.uploadId };
  store.set(kind, opened);
  return opened;
}

/** The file's parts, every one made (coordinator-store.ts `fileParts`), complete its upload: the file is stored. */
export async function completeUpload(store: EncodingStore, media: R2Bucket, kind: FileKind) {
  const upload = store.get<Upload>(kind);
  if (!upload) throw new Error(`no ${kind} upload for a finished ${kind} job`);
  const parts = store.fileParts(kind).map(({ part, etag }) => {
    if (etag === null) throw new Error(`${kind} part ${part} was never written`);
    return { partNumber: part, etag };
  });
  await media.resumeMultipartUpload(upload.key, upload.uploadId).complete(parts);
  store.set(`${kind}Done`, true);
}

export function isDone(store: EncodingStore, kind: FileKind): boolean {
  return store.get<boolean>(`${kind}Done`) === true;
}

/** The file's try failed, or the encoding stopped: its upload goes (failures only logged by `onError`). */
export async function abortUpload(
  store: EncodingStore,
  media: R2Bucket,
  kind: FileKind,
  onError: (error: unknown, key: string) => void,
) {
  const upload = store.get<Upload>(kind);
  if (!upload) return;
  store.forget(kind);
  store.forgetFileParts(kind);
  await media
    .resumeMultipartUpload(upload.key, upload.uploadId)
    .abort()
    .catch((error) => onError(error, upload.key));
}
