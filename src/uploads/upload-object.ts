import { DurableObject } from "cloudflare:workers";
import { z } from "zod";
import { mediaType } from "../http/body";
import { logError } from "../lib/log";
import type { Tenant } from "../lib/tenant";
import { abortUpload } from "../videos/cleanup";
import { deleteVideos } from "../videos/delete";
import { isUploaded } from "../videos/model";
import { findVideo } from "../videos/queries";
import { completeUpload } from "./complete";
import {
  headerInt,
  httpDate,
  MAX_PATCH_BYTES,
  OFFSET_CONTENT_TYPE,
  optionsAnswer,
  partSizeFor,
  speaksTus,
  TUS_VERSION,
  tusAnswer,
  tusMethod,
  UPLOAD_METHODS,
  URL_METHODS,
} from "./protocol";
import { videoIsLive } from "./queries";
import { uploadLocation } from "./url";

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
type Phase = "open" | "completing" | "completed" | "ended";

type State = UploadInit & {
  length: number | null;
  partSize: number;
  /** Bytes held durably: the parts in R2 and the tail in this object's storage. */
  offset: number;
  phase: Phase;
};

export type UploadProgress = { offset: number; length: number | null; phase: Phase; started: boolean };

/** The tail is kept in rows of at most this many bytes (SQLite-backed objects cap a row at 2 MB). */
const TAIL_ROW_BYTES = 1024 * 1024;
/** How soon a completion that failed (R2 or D1 down) is tried again. */
const COMPLETION_RETRY_MS = 10_000;

/**
 * One tus upload (contract section 13): the only writer of its R2 multipart upload. It serialises
 * the upload's requests, cuts the byte stream into parts of one size (`partSize`, every part but the
 * last, as R2 requires), and keeps the bytes after the last whole part (the tail) in its own SQLite
 * storage until the next PATCH completes that part. `offset` only ever counts bytes that are
 * durably held, in R2 or in the tail, so a client that resumes from HEAD neither loses nor repeats a
 * byte, whenever its connection dropped. A PATCH cut off mid-body keeps every byte that arrived.
 *
 * Storage: table `state` (one row, the JSON of `State`), `parts` (number, etag) for the parts in R2,
 * `tail` (seq, bytes). An alarm at the expiry aborts the multipart upload and drops the bytes.
 */
export class TusUpload extends DurableObject<Env> {
  #state: State | null;
  /** The tail's bytes as stored, kept in memory between PATCHes; null when it must be read. */
  private tailCache: Uint8Array | null = null;
  /** Requests that touch the upload run one at a time, in arrival order. */
  #chain: Promise<unknown> = Promise.resolve();
  /** Stops the PATCH being received (a newer request means its client gave up on it). */
  #interrupt: (() => void) | null = null;
  /** A PATCH has received bytes (even ones not yet held): the upload is under way. */
  #receiving = false;
  /** A tus DELETE is deleting the video. */
  #deleting = false;
  /** The object's clock; tests move it to an upload's expiry instead of waiting for it. */
  clock: () => number = Date.now;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    ctx.storage.sql.exec(
      "CREATE TABLE IF NOT EXISTS state (one INTEGER PRIMARY KEY CHECK (one = 1), doc TEXT NOT NULL);" +
        "CREATE TABLE IF NOT EXISTS parts (number INTEGER PRIMARY KEY, etag TEXT NOT NULL);" +
        "CREATE TABLE IF NOT EXISTS tail (seq INTEGER PRIMARY KEY, bytes BLOB NOT NULL);",
    );
    const row = ctx.storage.sql.exec<{ doc: string }>("SELECT doc FROM state").toArray()[0];
    this.#state = row ? (JSON.parse(row.doc) as State) : null;
  }

  /** Called once by POST /v1/uploads; a repeat changes nothing. */
  async init(input: UploadInit): Promise<void> {
    if (this.#state) return;
    const init = UploadInitSchema.parse(input);
    this.#save({ ...init, length: null, partSize: 0, offset: 0, phase: "open" });
    await this.ctx.storage.setAlarm(init.expiresAt);
  }

  /** The upload's progress, for GET /v1/uploads/{id}; null for an upload this object never had. */
  progress(): UploadProgress | null {
    const state = this.#state;
    if (!state) return null;
    return {
      offset: state.offset,
      length: state.length,
      phase: state.phase,
      started: state.offset > 0 || this.#receiving,
    };
  }

  /** Ends the upload from outside (its video or project was deleted): aborts and drops everything. */
  async terminate(): Promise<void> {
    // The delete this object makes itself (tus DELETE) ends the upload right after: waiting for
    // it here, from its own delete's clean-up, would wait for itself.
    if (this.#deleting || this.#state?.phase === "ended") return;
    await this.#exclusive(() => this.#end());
  }

  override async fetch(request: Request): Promise<Response> {
    const state = this.#state;
    if (!state) return tusAnswer(404, "*");
    const cors = state.corsOrigin;
    const method = tusMethod(request);
    const onUpload = new URL(request.url).pathname.endsWith("/source");
    const allowed = onUpload ? UPLOAD_METHODS : URL_METHODS;
    if (method === "OPTIONS") {
      // Beside a PATCH in flight, never after it: a browser's preflight for the next request must
      // not stop the one being received.
      const open = !this.#closed(this.clock()) && (await this.#live().catch(() => false));
      return open ? optionsAnswer(cors, state.maxSizeBytes, allowed) : tusAnswer(404, cors);
    }
    if (!allowed.split(", ").includes(method)) return tusAnswer(405, cors, { Allow: allowed });
    if (!speaksTus(request)) return tusAnswer(412, cors, { "Tus-Version": TUS_VERSION });
    return this.#exclusive(async () => {
      try {
        if (this.#closed(this.clock())) return tusAnswer(404, cors);
        if (!(await this.#live())) {
          // Deleted, the video or its project: the URL is closed at once, whatever the clean-up's pace.
          await this.#end();
          return tusAnswer(404, cors);
        }
        if (method === "POST") return await this.#create(request);
        if (this.#current().length === null) return tusAnswer(404, cors);
        if (method === "HEAD") return await this.#head();
        if (method === "PATCH") return await this.#patch(request);
        return await this.#terminate();
      } catch (error) {
        logError("tus request", error, { uploadId: state.uploadId, method });
        return tusAnswer(500, cors);
      }
    });
  }

  override async alarm(): Promise<void> {
    await this.#exclusive(async () => {
      const state = this.#state;
      if (!state || state.phase === "ended" || state.phase === "completed") return;
      if (state.phase === "completing") {
        try {
          await this.#complete();
          return;
        } catch (error) {
          logError("tus completion retry", error, { uploadId: state.uploadId });
        }
      }
      const now = this.clock();
      if (now >= state.expiresAt) {
        await this.#end();
        return;
      }
      await this.ctx.storage.setAlarm(
        state.phase === "completing" ? Math.min(now + COMPLETION_RETRY_MS, state.expiresAt) : state.expiresAt,
      );
    });
  }

  /** POST on the URL: creates the upload, once. */
  async #create(request: Request): Promise<Response> {
    const state = this.#current();
    const location = uploadLocation(state.url);
    if (state.length !== null) return this.#answer(409, { Location: location });
    if (request.headers.has("upload-defer-length")) return this.#answer(400);
    const length = headerInt(request, "upload-length");
    if (length === null) return this.#answer(400);
    if (length > state.maxSizeBytes) return this.#answer(413);
    this.#save({ ...state, length, partSize: partSizeFor(length) });
    // An empty source is whole at once.
    if (length === 0) await this.#completeOrRetry();
    return this.#answer(201, { Location: location, "Upload-Expires": httpDate(state.expiresAt) });
  }

  async #head(): Promise<Response> {
    // A completion left unfinished (R2 or D1 failed) is finished before the client is told it is done.
    if (this.#current().phase === "completing") await this.#completeOrRetry();
    const state = this.#current();
    return this.#answer(200, {
      "Upload-Offset": String(state.offset),
      "Upload-Length": String(state.length),
      "Upload-Expires": httpDate(state.expiresAt),
    });
  }

  async #patch(request: Request): Promise<Response> {
    const state = this.#current();
    const length = state.length as number;
    if (mediaType(request.headers.get("content-type")) !== OFFSET_CONTENT_TYPE) return this.#answer(415);
    // A missing or unreadable Upload-Offset is as wrong as another one: the client must HEAD first.
    if (headerInt(request, "upload-offset") !== state.offset) return this.#answer(409);
    const declared = request.headers.get("content-length");
    if (declared !== null) {
      const bytes = Number(declared);
      if (bytes > MAX_PATCH_BYTES || state.offset + bytes > length) return this.#answer(413);
    }
    let tooLarge = false;
    if (request.body && state.phase === "open") tooLarge = await this.#receive(request.body);
    else if (request.body) tooLarge = (await request.body.getReader().read()).value !== undefined;
    if (this.#current().phase === "completing") await this.#completeOrRetry();
    return this.#answer(tooLarge ? 413 : 204, {
      "Upload-Offset": String(this.#current().offset),
      "Upload-Expires": httpDate(state.expiresAt),
    });
  }

  /** DELETE on the upload: ends it, and deletes its video as DELETE /v1/videos/{id} does. */
  async #terminate(): Promise<Response> {
    const state = this.#current();
    const db = this.env.DB;
    this.#deleting = true;
    const [outcome] = await deleteVideos({ db, deletions: this.env.DELETION_QUEUE }, this.#tenant(), [
      state.videoId,
    ]).finally(() => {
      this.#deleting = false;
    });
    if (outcome && !outcome.ok) {
      if (outcome.code === "upload_completion_in_progress") return this.#answer(409);
      if (outcome.code === "video_not_found") {
        await this.#end();
        return this.#answer(404);
      }
      throw new Error(`video delete: ${outcome.code}`);
    }
    await this.#end();
    return this.#answer(204);
  }

  /**
   * Takes a PATCH body: fills parts of `partSize` from the tail and the stream, uploading each whole
   * part (one at a time, while the stream goes on) and committing it with the offset; then keeps
   * what is left as the new tail. Bytes past `Upload-Length`, or past 64 MiB in this request, are
   * not kept: returns true when there were some. A body cut off ends the loop as its end would.
   */
  async #receive(body: ReadableStream<Uint8Array>): Promise<boolean> {
    const start = this.#current();
    const length = start.length as number;
    const partSize = start.partSize;
    const limit = Math.min(MAX_PATCH_BYTES, length - start.offset);
    const tail = this.#loadTail();
    // Whatever happens below, the tail in memory is trusted again only once stored.
    this.tailCache = null;
    let base = start.offset - tail.byteLength;
    let buffer = new Uint8Array(Math.min(partSize, length - base));
    buffer.set(tail);
    let filled = tail.byteLength;
    let stored = tail.byteLength;
    let received = 0;
    let tooLarge = false;
    let uploading: Promise<void> = Promise.resolve();
    const reader = body.getReader();
    this.#interrupt = () => {
      reader.cancel().catch(() => {});
    };
    try {
      for (;;) {
        let chunk: Uint8Array;
        try {
          const next = await reader.read();
          if (next.done) break;
          chunk = next.value;
        } catch {
          // The client went away mid-body: keep what arrived.
          break;
        }
        if (received + chunk.byteLength > limit) {
          tooLarge = true;
          chunk = chunk.subarray(0, limit - received);
        }
        received += chunk.byteLength;
        if (received > 0) this.#receiving = true;
        while (chunk.byteLength > 0 && buffer.byteLength > 0) {
          const n = Math.min(buffer.byteLength - filled, chunk.byteLength);
          buffer.set(chunk.subarray(0, n), filled);
          filled += n;
          chunk = chunk.subarray(n);
          if (filled < buffer.byteLength) continue;
          // A whole part: upload it while the next one fills, at most one in flight.
          await uploading;
          uploading = this.#storePart(base / partSize + 1, buffer, base + buffer.byteLength);
          uploading.catch(() => {});
          base += buffer.byteLength;
          buffer = new Uint8Array(Math.min(partSize, length - base));
          filled = 0;
          stored = 0;
        }
        if (tooLarge) {
          await reader.cancel().catch(() => {});
          break;
        }
      }
      await uploading;
    } finally {
      this.#interrupt = null;
      this.#receiving = false;
    }
    if (filled > stored) this.#appendTail(buffer.subarray(stored, filled), base + filled);
    this.tailCache = buffer.slice(0, filled);
    if (this.#current().offset === length) this.#save({ ...this.#current(), phase: "completing" });
    return tooLarge;
  }

  /** Uploads one part to R2, then records it and its offset, dropping the tail it absorbed. */
  async #storePart(number: number, bytes: Uint8Array, offset: number): Promise<void> {
    const state = this.#current();
    const part = await this.#multipart(state).uploadPart(number, bytes);
    this.ctx.storage.transactionSync(() => {
      this.ctx.storage.sql.exec("INSERT OR REPLACE INTO parts (number, etag) VALUES (?, ?)", number, part.etag);
      this.ctx.storage.sql.exec("DELETE FROM tail");
      this.#save({ ...this.#current(), offset });
    });
  }

  /** Appends bytes to the stored tail and moves the offset past them, in one transaction. */
  #appendTail(bytes: Uint8Array, offset: number): void {
    this.ctx.storage.transactionSync(() => {
      for (let at = 0; at < bytes.byteLength; at += TAIL_ROW_BYTES) {
        this.ctx.storage.sql.exec(
          "INSERT INTO tail (seq, bytes) VALUES ((SELECT coalesce(max(seq), 0) + 1 FROM tail), ?)",
          bytes.slice(at, at + TAIL_ROW_BYTES),
        );
      }
      this.#save({ ...this.#current(), offset });
    });
  }

  #loadTail(): Uint8Array {
    if (this.tailCache) return this.tailCache;
    const rows = this.ctx.storage.sql.exec<{ bytes: ArrayBuffer }>("SELECT bytes FROM tail ORDER BY seq").toArray();
    const tail = new Uint8Array(rows.reduce((sum, row) => sum + row.bytes.byteLength, 0));
    let at = 0;
    for (const row of rows) {
      tail.set(new Uint8Array(row.bytes), at);
      at += row.bytes.byteLength;
    }
    return tail;
  }

  /** Completes now, or leaves it to the alarm soon when R2 or D1 fails. */
  async #completeOrRetry(): Promise<void> {
    try {
      await this.#complete();
    } catch (error) {
      logError("tus completion", error, { uploadId: this.#current().uploadId });
      await this.ctx.storage.setAlarm(this.clock() + COMPLETION_RETRY_MS);
    }
  }

  /**
   * Every byte is held: completes the upload as the part API does, through the one
   * `completeUpload` (the lease, R2's completion, the video marked uploaded). An empty source gets
   * its one empty part first (R2 completes nothing from no parts).
   */
  async #complete(): Promise<void> {
    const state = this.#current();
    if (state.length === 0 && !this.#storedParts().some((part) => part.partNumber === 1)) {
      const part = await this.#multipart(state).uploadPart(1, new Uint8Array(0));
      this.ctx.storage.sql.exec("INSERT OR REPLACE INTO parts (number, etag) VALUES (1, ?)", part.etag);
    }
    const completion = await completeUpload(
      { db: this.env.DB, media: this.env.MEDIA, encodeQueue: this.env.ENCODE_QUEUE },
      { tenant: this.#tenant(), videoId: state.videoId },
      this.#storedParts(),
      this.clock,
    );
    if (completion.outcome === "uploaded") return this.#finished();
    if (completion.outcome === "busy") {
      const video = await findVideo(this.env.DB, this.#tenant(), state.videoId);
      if (video && isUploaded(video.status)) return this.#finished();
      if (!video) return this.#end();
      throw new Error("the video's completion lease is held elsewhere");
    }
    // This object cut every part itself: R2 refusing them is R2's or this object's failure, retried.
    throw new Error(`the upload's completion failed: ${completion.outcome}`);
  }

  /** The parts in R2, by number, as the completion names them. */
  #storedParts(): { partNumber: number; etag: string }[] {
    return this.ctx.storage.sql
      .exec<{ number: number; etag: string }>("SELECT number, etag FROM parts ORDER BY number")
      .toArray()
      .map((row) => ({ partNumber: row.number, etag: row.etag }));
  }

  #finished(): void {
    this.ctx.storage.transactionSync(() => {
      this.ctx.storage.sql.exec("DELETE FROM parts");
      this.ctx.storage.sql.exec("DELETE FROM tail");
      const state = this.#current();
      this.#save({ ...state, offset: state.length ?? state.offset, phase: "completed" });
    });
    this.tailCache = null;
  }

  /** Aborts the multipart upload (unless the source is complete) and drops every byte held here. */
  async #end(): Promise<void> {
    const state = this.#state;
    if (!state || state.phase === "ended") return;
    if (state.phase !== "completed") {
      await abortUpload(this.env.MEDIA, { source_key: state.sourceKey, upload_r2_id: state.r2UploadId });
    }
    this.ctx.storage.transactionSync(() => {
      this.ctx.storage.sql.exec("DELETE FROM parts");
      this.ctx.storage.sql.exec("DELETE FROM tail");
      this.#save({ ...this.#current(), phase: "ended" });
    });
    this.tailCache = null;
    await this.ctx.storage.deleteAlarm();
  }

  /** Terminated, deleted, or past its expiry: the URL and its upload answer 404. */
  /** Whether the upload's video and project are still there (a D1 read: deletes close the URL at once). */
  #live(): Promise<boolean> {
    const state = this.#current();
    return videoIsLive(this.env.DB, state.projectId, state.videoId);
  }

  #closed(now: number): boolean {
    const state = this.#current();
    return state.phase === "ended" || now >= state.expiresAt;
  }

  #exclusive<T>(task: () => Promise<T>): Promise<T> {
    // A client that sends a new request has given up on the one still being received.
    this.#interrupt?.();
    const run = this.#chain.then(task, task);
    this.#chain = run.catch(() => {});
    return run;
  }

  #answer(status: number, headers: Record<string, string> = {}): Response {
    return tusAnswer(status, this.#current().corsOrigin, headers);
  }

  #current(): State {
    if (!this.#state) throw new Error("the upload object has no state");
    return this.#state;
  }

  #save(state: State): void {
    this.ctx.storage.sql.exec("INSERT OR REPLACE INTO state (one, doc) VALUES (1, ?)", JSON.stringify(state));
    this.#state = state;
  }

  /**
   * Whose video the upload acts on: its own, by id, whatever its mode. The URL is the credential
   * for this one video (contract §13), so no mode narrows what it reaches.
   */
  #tenant(): Tenant {
    return { projectId: this.#current().projectId, mode: "both" };
  }

  #multipart(state: State): R2MultipartUpload {
    return this.env.MEDIA.resumeMultipartUpload(state.sourceKey, state.r2UploadId);
  }
}
