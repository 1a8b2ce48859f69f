import { DurableObject } from "cloudflare:workers";
import { logError } from "../../lib/log";
import { isUploaded } from "../../videos/model";
import { findVideo } from "../../videos/queries";
import { completeUpload } from "../complete";
import { videoIsLive } from "../queries";
import { deleteUpload, headUpload, patchUpload, postUpload, type TusContext } from "./handlers";
import { optionsAnswer, speaksTus, TUS_VERSION, tusAnswer, tusMethod, UPLOAD_METHODS, URL_METHODS } from "./protocol";
import { type Phase, type UploadInit, UploadInitSchema, UploadStore, uploadTenant } from "./store";

export type UploadProgress = { offset: number; length: number | null; phase: Phase; started: boolean };

/** How soon a completion that failed (R2 or D1 down) is tried again. */
const COMPLETION_RETRY_MS = 10_000;

/**
 * One tus upload (docs/api-guide.md#direct-uploads-from-a-browser-tus): the only writer of its R2
 * multipart upload. It serialises the upload's requests and hands each to its method's handler
 * (handlers.ts); the store (store.ts) holds the parts in R2 and the tail in this object's storage,
 * and the body is cut into parts of one size as it arrives (receive.ts). `offset` only ever counts
 * bytes that are durably held, so a client that resumes from HEAD neither loses nor repeats a byte,
 * whenever its connection dropped. An alarm at the expiry aborts the multipart upload and drops the
 * bytes.
 */
export class TusUpload extends DurableObject<Env> {
  /** Not `#private`: test/uploads/tus.test.ts clears `store.tailCache` to act as an evicted object. */
  private readonly store: UploadStore;
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
    this.store = new UploadStore(ctx.storage, env.MEDIA);
  }

  /** Called once by POST /v1/uploads; a repeat changes nothing. */
  async init(input: UploadInit): Promise<void> {
    if (this.store.state) return;
    const init = UploadInitSchema.parse(input);
    this.store.save({ ...init, length: null, partSize: 0, offset: 0, phase: "open" });
    await this.ctx.storage.setAlarm(init.expiresAt);
  }

  /** The upload's progress, for GET /v1/uploads/{id}; null for an upload this object never had. */
  progress(): UploadProgress | null {
    const state = this.store.state;
    if (!state) return null;
    return {
      offset: state.offset,
      length: state.length,
      phase: state.phase,
      started: state.offset > 0 || this.#receiving,
    };
  }

  /** Ends the upload from outside (its video or project was deleted): aborts and drops everything. */
  async end(): Promise<void> {
    // The delete this object makes itself (tus DELETE) ends the upload right after: waiting for
    // it here, from its own delete's clean-up, would wait for itself.
    if (this.#deleting || this.store.state?.phase === "ended") return;
    await this.#exclusive(() => this.#abort());
  }

  override async fetch(request: Request): Promise<Response> {
    const state = this.store.state;
    if (!state) return tusAnswer(404, "*");
    const cors = state.corsOrigin;
    const method = tusMethod(request);
    const onUpload = new URL(request.url).pathname.endsWith("/source");
    const allowed = onUpload ? UPLOAD_METHODS : URL_METHODS;
    if (method === "OPTIONS") {
      // Beside a PATCH in flight, never after it: a browser's preflight for the next request must
      // not stop the one being received.
      const open = !this.#closed() && (await this.#live().catch(() => false));
      return open ? optionsAnswer(cors, state.maxSizeBytes, allowed) : tusAnswer(404, cors);
    }
    if (!allowed.split(", ").includes(method)) return tusAnswer(405, cors, { Allow: allowed });
    if (!speaksTus(request)) return tusAnswer(412, cors, { "Tus-Version": TUS_VERSION });
    return this.#exclusive(async () => {
      try {
        if (this.#closed()) return tusAnswer(404, cors);
        if (!(await this.#live())) {
          // Deleted, the video or its project: the URL is closed at once, whatever the clean-up's pace.
          await this.#abort();
          return tusAnswer(404, cors);
        }
        const tus = this.#context();
        if (method === "POST") return await postUpload(tus, request);
        if (this.store.current().length === null) return tusAnswer(404, cors);
        if (method === "HEAD") return await headUpload(tus);
        if (method === "PATCH") return await patchUpload(tus, request);
        return await deleteUpload(tus);
      } catch (error) {
        logError("tus request", error, { uploadId: state.uploadId, method });
        return tusAnswer(500, cors);
      }
    });
  }

  override async alarm(): Promise<void> {
    await this.#exclusive(async () => {
      const state = this.store.state;
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
        await this.#abort();
        return;
      }
      await this.ctx.storage.setAlarm(
        state.phase === "completing" ? Math.min(now + COMPLETION_RETRY_MS, state.expiresAt) : state.expiresAt,
      );
    });
  }

  /** What a method's handler works with. */
  #context(): TusContext {
    return {
      store: this.store,
      deletions: { db: this.env.DB, deletions: this.env.DELETION_QUEUE },
      reception: {
        interruptWith: (stop) => {
          this.#interrupt = stop;
        },
        receiving: (on) => {
          this.#receiving = on;
        },
      },
      completeOrRetry: () => this.#completeOrRetry(),
      end: () => this.#abort(),
      deletingVideo: async (task) => {
        this.#deleting = true;
        try {
          return await task();
        } finally {
          this.#deleting = false;
        }
      },
    };
  }

  /** Completes now, or leaves it to the alarm soon when R2 or D1 fails. */
  async #completeOrRetry(): Promise<void> {
    try {
      await this.#complete();
    } catch (error) {
      logError("tus completion", error, { uploadId: this.store.current().uploadId });
      await this.ctx.storage.setAlarm(this.clock() + COMPLETION_RETRY_MS);
    }
  }

  /**
   * Every byte is held: completes the upload as the part API does, through the one
   * `completeUpload` (the lease, R2's completion, the video marked uploaded).
   */
  async #complete(): Promise<void> {
    const state = this.store.current();
    if (state.length === 0) await this.store.storeEmptyPart();
    const tenant = uploadTenant(state);
    const completion = await completeUpload(
      { db: this.env.DB, media: this.env.MEDIA, encodeQueue: this.env.ENCODE_QUEUE },
      { tenant, videoId: state.videoId },
      this.store.parts(),
      this.clock,
    );
    if (completion.outcome === "uploaded") return this.store.completed();
    if (completion.outcome === "busy") {
      const video = await findVideo(this.env.DB, tenant, state.videoId);
      if (video && isUploaded(video.status)) return this.store.completed();
      if (!video) return this.#abort();
      throw new Error("the video's completion lease is held elsewhere");
    }
    // This object cut every part itself: R2 refusing them is R2's or this object's failure, retried.
    throw new Error(`the upload's completion failed: ${completion.outcome}`);
  }

  /** Aborts the multipart upload (unless the source is complete) and drops every byte held here. */
  async #abort(): Promise<void> {
    const state = this.store.state;
    if (!state || state.phase === "ended") return;
    await this.store.end();
    await this.ctx.storage.deleteAlarm();
  }

  /** Whether the upload's video and project are still there (a D1 read: deletes close the URL at once). */
  #live(): Promise<boolean> {
    const state = this.store.current();
    return videoIsLive(this.env.DB, state.projectId, state.videoId);
  }

  /** Terminated, deleted, or past its expiry: the URL and its upload answer 404. */
  #closed(): boolean {
    const state = this.store.current();
    return state.phase === "ended" || this.clock() >= state.expiresAt;
  }

  #exclusive<T>(task: () => Promise<T>): Promise<T> {
    // A client that sends a new request has given up on the one still being received.
    this.#interrupt?.();
    const run = this.#chain.then(task, task);
    this.#chain = run.catch(() => {});
    return run;
  }
}
