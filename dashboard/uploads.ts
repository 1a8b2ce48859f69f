import { Upload } from "tus-js-client";
import { api, must } from "./api";
import type { Mode } from "./enums";
import { messageOf } from "./errors";

/**
 * Uploads over tus (docs/api-guide.md#direct-uploads-from-a-browser-tus): each file becomes a video
 * titled with its name less the extension, created by `POST /v1/uploads` and sent with
 * tus-js-client, whose URL storage (the browser's localStorage) remembers the upload by the file
 * and project, so choosing the same file again after a reload or a lost connection resumes where it
 * stopped instead of starting over.
 */
export type UploadItem = {
  key: string;
  name: string;
  percent: number;
  state: "uploading" | "done" | "failed";
  resumed: boolean;
  error: string | null;
};

/** A tus PATCH at most this big: progress is saved at least this often (the API takes up to 64 MiB). */
export const CHUNK_BYTES = 16 * 1024 * 1024;

/** The video's title: the file's name less its extension (a name that is only an extension stays). */
export function titleOf(fileName: string): string {
  const dot = fileName.lastIndexOf(".");
  const title = dot > 0 ? fileName.slice(0, dot) : fileName;
  return title.slice(0, 200);
}

/** Which stored upload a file resumes: the same file (name, size, date) into the same project and mode. */
export function fingerprintOf(
  file: { name: string; size: number; lastModified: number },
  projectId: string,
  mode: Mode,
) {
  return ["dashboard", projectId, mode, file.name, file.size, file.lastModified].join("/");
}

/** Percent of bytes sent, whole, 0–100. */
export function percentOf(sent: number, total: number): number {
  if (total <= 0) return 100;
  return Math.min(100, Math.max(0, Math.floor((sent / total) * 100)));
}

let items: UploadItem[] = [];
const listeners = new Set<(items: UploadItem[]) => void>();
let counter = 0;

function update(key: string, change: Partial<UploadItem>) {
  items = items.map((item) => (item.key === key ? { ...item, ...change } : item));
  for (const listener of listeners) listener(items);
}

export function subscribeUploads(listener: (items: UploadItem[]) => void): () => void {
  listeners.add(listener);
  listener(items);
  return () => listeners.delete(listener);
}

/** Starts every file's upload; `onFinished` runs after each one ends (the list then refreshes). */
export function uploadFiles(files: Iterable<File>, projectId: string, mode: Mode, onFinished: () => void) {
  for (const file of files) {
    counter += 1;
    const key = `${counter}`;
    items = [...items, { key, name: file.name, percent: 0, state: "uploading", resumed: false, error: null }];
    for (const listener of listeners) listener(items);
    send(file, key, projectId, mode, true)
      .catch((error: unknown) => update(key, { state: "failed", error: messageOf(error) }))
      .finally(onFinished);
  }
}

async function send(file: File, key: string, projectId: string, mode: Mode, mayResume: boolean): Promise<void> {
  const fingerprint = fingerprintOf(file, projectId, mode);
  const upload = new Upload(file, {
    chunkSize: CHUNK_BYTES,
    retryDelays: [0, 1000, 3000, 5000, 10000],
    fingerprint: async () => fingerprint,
    storeFingerprintForResuming: true,
    removeFingerprintOnSuccess: true,
    metadata: { filename: file.name, filetype: file.type },
  });
  const previous = mayResume ? (await upload.findPreviousUploads())[0] : undefined;
  if (previous) {
    upload.resumeFromPreviousUpload(previous);
    update(key, { resumed: true });
  } else {
    const created = await must(
      api.POST("/v1/uploads", {
        params: { query: { projectId, mode } },
        body: { video: { title: titleOf(file.name) }, corsOrigin: location.origin },
      }),
    );
    upload.options.endpoint = created.url;
  }
  try {
    await new Promise<void>((resolve, reject) => {
      upload.options.onProgress = (sent, total) => update(key, { percent: percentOf(sent, total) });
      upload.options.onSuccess = () => resolve();
      upload.options.onError = reject;
      upload.start();
    });
  } catch (error) {
    // A stored upload that expired or was deleted cannot be resumed: start this file afresh.
    if (previous) return send(file, key, projectId, mode, false);
    throw error;
  }
  update(key, { percent: 100, state: "done" });
}
