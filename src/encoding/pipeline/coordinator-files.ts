import { nextPart, type PartStep } from "../../../media-plan/files.mjs";
import { type Plan, segmentCount } from "../../../media-plan/plan.mjs";
import type { FilePart, Fragment } from "../../../media-plan/protocol.mjs";
import { logError } from "../../lib/log";
import { m4aKey, mp4Key } from "../../lib/storage-keys";
import { FilePartsStore } from "./coordinator-files-store";
import type { EncodingStore } from "./coordinator-store";

/**
 * The files a video's coordinator has put together from its stored segments, each an R2 multipart
 * upload the encoder's jobs fill a part each (callback-routes.ts; media-plan/PROTOCOL.md, "Files in
 * parts"): the MP4 (docs/encoding.md#renditions-and-the-watermark, when `plan.mp4`) and the M4A
 * (docs/audio-only.md, when `plan.audio`). The upload, its parts made, and whether the file is
 * complete are kept in the coordinator's store (`<kind>`, `<kind>Done`), its parts in
 * coordinator-files-store.ts.
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

/**
 * The files of one video's encoding: the upload each job of a file writes its part into, the parts
 * kept as their jobs end, and the upload completed once the last is kept (the first part, made
 * last). A file R2 refuses to complete is made again from its first part, `maxTries` times at most.
 */
export class FileWork {
  private readonly parts: FilePartsStore;

  constructor(
    private readonly store: EncodingStore,
    sql: SqlStorage,
    private readonly media: R2Bucket,
    private readonly maxTries: number,
  ) {
    this.parts = new FilePartsStore(sql);
  }

  /** The part a job of `kind` makes next, its file's upload opened first; null once every part is made. */
  async step(kind: FileKind, plan: Plan, video: Video): Promise<PartStep | null> {
    await this.open(kind, video);
    const next = nextPart(segmentCount(plan), this.parts.parts(kind));
    return next === "complete" ? null : next;
  }

  /**
   * A job of `kind` made its part: it is kept as the file's next (one job of a file runs at a time,
   * and only its result changes what the file has), and the upload completes once it was the last.
   * False when completing failed for the file's last try: the encoding cannot end with it.
   */
  async partMade(kind: FileKind, plan: Plan, made: FilePart | undefined): Promise<boolean> {
    const count = segmentCount(plan);
    const step = nextPart(count, this.parts.parts(kind));
    if (!made || step === "complete") return true;
    this.parts.keep(kind, { part: step.part, from: step.from, ...made });
    if (nextPart(count, this.parts.parts(kind)) !== "complete") return true;
    try {
      await this.complete(kind);
      return true;
    } catch (error) {
      logError(`encoding: complete the ${kind}`, error, { videoId: this.store.video().videoId });
      await this.abort(kind);
      const failures = (this.store.get<number>(`${kind}Failures`) ?? 0) + 1;
      this.store.set(`${kind}Failures`, failures);
      return failures < this.maxTries;
    }
  }

  /** The fragments of every part of `kind` but the first, in order: what the first part's index lists. */
  index(kind: FileKind): Fragment[] {
    return this.parts.parts(kind).flatMap((part) => (part.part === 1 ? [] : part.fragments));
  }

  /** Of `files`, those not complete yet. */
  pending(files: FileKind[]): FileKind[] {
    return files.filter((kind) => this.store.get<boolean>(`${kind}Done`) !== true);
  }

  /** The encoding stopped without its files: each open upload goes (a failure is only logged). */
  async abortAll() {
    await this.abort("mp4");
    await this.abort("m4a");
  }

  /** The file's upload: one, its parts written a job at a time (a failed job writes its part again), until it completes or the encoding ends without it. */
  private async open(kind: FileKind, video: Video): Promise<Upload> {
    const open = this.store.get<Upload>(kind);
    if (open) return open;
    const file = FILES[kind];
    const key = file.key(video.projectId, video.videoId);
    const upload = await this.media.createMultipartUpload(key, { httpMetadata: { contentType: file.type } });
    const opened = { key, uploadId: upload.uploadId };
    this.store.set(kind, opened);
    return opened;
  }

  /** Every part made (`parts`): the upload completes, and the file is stored. */
  private async complete(kind: FileKind) {
    const upload = this.store.get<Upload>(kind);
    if (!upload) throw new Error(`no ${kind} upload for a finished ${kind} job`);
    const parts = this.parts.parts(kind).map(({ part, etag }) => {
      if (etag === null) throw new Error(`${kind} part ${part} was never written`);
      return { partNumber: part, etag };
    });
    await this.media.resumeMultipartUpload(upload.key, upload.uploadId).complete(parts);
    this.store.set(`${kind}Done`, true);
  }

  /** The file's try failed, or the encoding stopped: its upload goes. */
  private async abort(kind: FileKind) {
    const upload = this.store.get<Upload>(kind);
    if (!upload) return;
    this.store.forget(kind);
    this.parts.forget(kind);
    await this.media
      .resumeMultipartUpload(upload.key, upload.uploadId)
      .abort()
      .catch((error) => logError(`encoding: abort the ${kind} upload`, error, { key: upload.key }));
  }
}
