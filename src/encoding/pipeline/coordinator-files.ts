import type { Part } from "../../../media-plan/protocol.mjs";
import { m4aKey, mp4Key } from "../../lib/storage-keys";
import type { EncodingStore } from "./coordinator-store";

/**
 * The files a video's coordinator has put together from its stored segments, each an R2 multipart
 * upload the encoder's job fills part by part (callback-routes.ts): the MP4
 * (docs/encoding.md#renditions-and-the-watermark, when `plan.mp4`) and the M4A (docs/audio-only.md,
 * when `plan.audio`). The upload of the unit's current try and whether the file is complete are
 * kept in the coordinator's store (`<kind>` and `<kind>Done`).
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

/** The upload of the file's current try: one per try (a failed try aborts it), kept across a busy answer. */
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

/** The job's parts complete the file's upload: the file is stored. */
export async function completeUpload(store: EncodingStore, media: R2Bucket, kind: FileKind, parts: Part[]) {
  const upload = store.get<Upload>(kind);
  if (!upload) throw new Error(`no ${kind} upload for a finished ${kind} job`);
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
  await media
    .resumeMultipartUpload(upload.key, upload.uploadId)
    .abort()
    .catch((error) => onError(error, upload.key));
}
