import { z } from "zod";
import { abortMultipartUpload } from "../../lib/r2";
import { appendBytes, bytesTable, readBytes } from "../../lib/sqlite-bytes";
import type { Tenant } from "../../lib/tenant";

/** What POST /v1/uploads gives the object: everything it needs to answer without D1. */
export const UploadInitSchema = z.strictObject({
  uploadId: z.string().min(1),
  videoId: z.string().min(1),
  projectId: z.string().min(1),
  sourceKey: z.string().min(1),
  r2UploadId: z.string().min(1),
  corsOrigin: z.string().min(1),
  maxSizeBytes: z.int().positive(),
  expiresAt: z.int().positive(),
  url: z.url(),
});
export type UploadInit = z.infer<typeof UploadInitSchema>;

/**
 * - `open`: taking bytes (or waiting for its creation, while `length` is null);
 * - `completing`: every byte is held and the multipart upload is being completed (retried until it is);
 * - `completed`: the video is uploaded;
 * - `ended`: terminated, deleted or expired: its multipart upload aborted, its bytes gone.
 */
export type Phase = "open" | "completing" | "completed" | "ended";

export type State = UploadInit & {
  length: number | null;
  partSize: number;
  /** Bytes held durably: the parts in R2 and the tail in this object's storage. */
  offset: number;
  phase: Phase;
};

/**
 * Whose video the upload acts on: its own, by id, whatever its mode. The URL is the credential
 * for this one video (docs/api-guide.md#direct-uploads-from-a-browser-tus), so no mode narrows what
 * it reaches.
 */
export function uploadTenant(state: State): Tenant {
  return { projectId: state.projectId, mode: "both" };
}

/**
 * Where one tus upload keeps what it holds (tusd's data store, for R2 and a Durable Object): its
 * state, the parts it has put in the R2 multipart upload, and the tail (the bytes after the last
 * whole part) in the object's own SQLite storage. Every change of the offset is written in the same
 * transaction as the bytes it counts, so `offset` only ever counts bytes that are durably held.
 *
 * Storage: table `state` (one row, the JSON of `State`), `parts` (number, etag), `tail` (seq, bytes).
 */
export class UploadStore {
  #state: State | null;
  /**
   * The tail's bytes as stored, kept in memory between PATCHes; null when it must be read. (Not
   * `#private`: a test forgets it, as an evicted object would.)
   */
  private tailCache: Uint8Array | null = null;

  constructor(
    private readonly storage: DurableObjectStorage,
    private readonly media: R2Bucket,
  ) {
    storage.sql.exec(
      "CREATE TABLE IF NOT EXISTS state (one INTEGER PRIMARY KEY CHECK (one = 1), doc TEXT NOT NULL);" +
        "CREATE TABLE IF NOT EXISTS parts (number INTEGER PRIMARY KEY, etag TEXT NOT NULL);" +
        bytesTable("tail"),
    );
    const row = storage.sql.exec<{ doc: string }>("SELECT doc FROM state").toArray()[0];
    this.#state = row ? (JSON.parse(row.doc) as State) : null;
  }

  /** The upload's state; null for an upload this object never had. */
  get state(): State | null {
    return this.#state;
  }

  current(): State {
    if (!this.#state) throw new Error("the upload object has no state");
    return this.#state;
  }

  save(state: State): void {
    this.storage.sql.exec("INSERT OR REPLACE INTO state (one, doc) VALUES (1, ?)", JSON.stringify(state));
    this.#state = state;
  }

  /** Uploads one part to R2, then records it and its offset, dropping the tail it absorbed. */
  async storePart(number: number, bytes: Uint8Array, offset: number): Promise<void> {
    const part = await this.#multipart().uploadPart(number, bytes);
    this.storage.transactionSync(() => {
      this.#recordPart(number, part.etag);
      this.storage.sql.exec("DELETE FROM tail");
      this.save({ ...this.current(), offset });
    });
  }

  /** The one empty part an empty source needs (R2 completes nothing from no parts), once. */
  async storeEmptyPart(): Promise<void> {
    if (this.parts().some((part) => part.partNumber === 1)) return;
    const part = await this.#multipart().uploadPart(1, new Uint8Array(0));
    this.#recordPart(1, part.etag);
  }

  /**
   * The tail's bytes, for a body that goes on from them: from memory when the last body left them
   * there, else from SQLite. Until `settleTail`, memory is not trusted: a body that fails midway
   * leaves the stored tail and the parts as the only truth.
   */
  takeTail(): Uint8Array {
    const cached = this.tailCache;
    this.tailCache = null;
    if (cached) return cached;
    return readBytes(this.storage.sql, "tail");
  }

  /**
   * The body is taken: `tail` is the new tail, of which the last `unstored` bytes are not stored
   * yet. Appends those and moves the offset past them in one transaction, then keeps the whole
   * tail in memory for the next body.
   */
  settleTail(tail: Uint8Array, unstored: number): void {
    if (unstored > 0) {
      const fresh = tail.subarray(tail.byteLength - unstored);
      const offset = this.current().offset + unstored;
      this.storage.transactionSync(() => {
        appendBytes(this.storage.sql, "tail", fresh);
        this.save({ ...this.current(), offset });
      });
    }
    this.tailCache = tail.slice();
  }

  /** The parts in R2, by number, as the completion names them. */
  parts(): R2UploadedPart[] {
    return this.storage.sql
      .exec<{ number: number; etag: string }>("SELECT number, etag FROM parts ORDER BY number")
      .toArray()
      .map((row) => ({ partNumber: row.number, etag: row.etag }));
  }

  /** The video has its source: drops the parts and the tail, and counts every byte. */
  completed(): void {
    this.#drop(() => {
      const state = this.current();
      return { ...state, offset: state.length ?? state.offset, phase: "completed" };
    });
  }

  /** Aborts the multipart upload (unless the source is complete) and drops every byte held here. */
  async end(): Promise<void> {
    const state = this.current();
    if (state.phase !== "completed") {
      await abortMultipartUpload(this.media, state.sourceKey, state.r2UploadId);
    }
    this.#drop(() => ({ ...this.current(), phase: "ended" }));
  }

  #drop(next: () => State): void {
    this.storage.transactionSync(() => {
      this.storage.sql.exec("DELETE FROM parts");
      this.storage.sql.exec("DELETE FROM tail");
      this.save(next());
    });
    this.tailCache = null;
  }

  #recordPart(number: number, etag: string): void {
    this.storage.sql.exec("INSERT OR REPLACE INTO parts (number, etag) VALUES (?, ?)", number, etag);
  }

  #multipart(): R2MultipartUpload {
    const state = this.current();
    return this.media.resumeMultipartUpload(state.sourceKey, state.r2UploadId);
  }
}
