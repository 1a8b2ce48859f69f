import { DurableObject } from "cloudflare:workers";
import { MIN_STILL_WIDTH, storyboard } from "../../../media-plan/pictures.mjs";
import { runLength, segmentCount, topRendition } from "../../../media-plan/plan.mjs";
import { type Fragment, type Priority, type Result, segmentName } from "../../../media-plan/protocol.mjs";
import { frameKey, posterKey, segmentKey, sourceKey, storyboardKey } from "../../lib/storage-keys";
import { planOf } from "../../videos/model";
import type { FileKind, Upload } from "./coordinator-files";
import { type SourceOf, segmentVerdict, sourceOf, staleViewerUnits, viewerUnit } from "./coordinator-rules";
import type { SpeechRequest } from "./coordinator-speech-store";
import { EncodingStore, type Kind, type Video } from "./coordinator-store";
import { frameWaited, type Outcome, segmentWaited, Waiters } from "./coordinator-waiters";
import { EncodingWork } from "./coordinator-work";
import type { EncodeSettings } from "./encode-settings";
import { admitFrame } from "./frame-budget";
import { liveVideo } from "./queries";

/** How long a viewer's request for a segment waits for it before it is told to come back. */
export const WANT_TIMEOUT_MS = 25_000;
/**
 * How long a viewer's request for a frame waits for it (the 5 s
 * docs/encoding.md#frames-and-the-storyboard promises, and room for a busy machine). A frame whose
 * every viewer has stopped waiting and that has not started is dropped.
 */
export const FRAME_WAIT_MS = 10_000;

/** A frame refused by the video's frame budget: the seconds until one frees. */
type Limited = { retryAfter: number };

/**
 * One video's encoding (docs/encoding.md), from its upload to `ready`: a Durable Object
 * per video (`idFromName(videoId)`), which owns what its encoding has made and still needs.
 *
 * The work comes in units, each one encoder job when it runs: the probe (interactive), then (once
 * the plan is made and the video is playable) the poster, background runs of a few segments of
 * every rendition, the storyboard's tiles and then its sprite, and the MP4 from the highest
 * rendition's segments and the M4A from the lowest's audio once they are all stored, a part per
 * job (coordinator-files.ts). Every background job is short (BACKGROUND_JOB_MS): the one slot a
 * 2-core machine has for them passes between projects job by job.
 * A viewer asking for
 * a segment that is not made yet (`want`) gets an interactive unit of that segment and the next
 * few of its rendition, and the background runs near it move to the front. Every unit waits for a
 * slot from the pool (pool.ts), which shares the encoders fairly between projects; interactive and
 * background slots are counted apart, so a viewer never waits behind background work.
 *
 * A segment is stored once: a job reserves it, stores it and reports it stored (`reserveSegment`,
 * `segmentStored`); a second job making the same segment is told to drop it, so served bytes never
 * change. A failed or silent job's unit runs again, from its first missing segment, up to
 * MAX_TRIES; then the video errors. After any unit ends, what no unit covers and is not stored gets
 * a unit again, so nothing is left behind. A delete (`cancel`) stops every job and answers every
 * later call with "gone".
 *
 * A frame at a time and width (`frame`) is an interactive unit too, while the video encodes and
 * after it is ready: it is made once, stored under the video's prefix and then only read; a frame
 * that fails MAX_TRIES times is refused to its viewer, never errors the video.
 *
 * The speech of a generated caption track (`hear`) is heard in background units too, chunk by chunk,
 * while the video encodes or after it is ready (coordinator-speech.ts); a chunk that fails
 * MAX_TRIES times fails the track, never the video. So are the added audio tracks of a ready video
 * (`audio`, coordinator-audio.ts), a run of segments at a time.
 */
export class VideoEncoding extends DurableObject<Env> {
  private readonly store: EncodingStore;
  private readonly waiters = new Waiters();
  private readonly work: EncodingWork;
  /** The object's clock (every time it stores or compares); tests move it instead of waiting. */
  clock: () => number = Date.now;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.store = new EncodingStore(ctx.storage.sql);
    this.work = new EncodingWork(ctx, env, this.store, this.waiters, () => this.clock());
  }

  /** Where the encoding stands: for tests, and for the README's walk-through of the state. */
  state() {
    return {
      phase: this.store.phase(),
      plan: this.store.plan(),
      units: this.store.units(),
      slots: this.store.slots(),
      stored: this.store.storedCount(),
    };
  }

  // ─── what the Worker asks ─────────────────────────────────────────────────────────────────

  /** An uploaded video to encode (the encodings queue's message); again is harmless. */
  async start(video: Video) {
    if (this.store.phase() === "idle") {
      this.store.set("video", video);
      this.store.set("phase", "waiting");
      this.store.addUnit({ id: "probe", kind: "probe", priority: "interactive", rank: -2e15 });
    }
    await this.resume();
  }

  /** Looks at the jobs and the queue again (the sweep calls this for an encoding not heard from). */
  async resume() {
    if (!this.store.serving()) return;
    await this.work.arm();
    await this.work.checkJobs();
    await this.work.schedule();
  }

  /** The pool grants slots of `kind`: they run the queued units, or go back. */
  async granted(kind: Priority, slots: string[]) {
    for (const slot of slots) this.store.hold(slot, kind);
    if (!this.store.serving()) {
      await this.work.giveBack(slots);
      return;
    }
    await this.work.schedule();
  }

  /**
   * A viewer asks for segment `index` of `rendition`, not stored yet: it is made now if it is not
   * being made, and the answer comes when it is stored (`stored`), when the video will never have it
   * (`gone`), or after WANT_TIMEOUT_MS (`pending`).
   */
  async want(rendition: string, index: number): Promise<Outcome | "pending"> {
    const plan = this.store.plan();
    if (!plan || !this.store.active()) return this.store.phase() === "ready" ? "stored" : "gone";
    if (!plan.renditions.some((r) => r.resolution === rendition) || index < 0 || index >= segmentCount(plan)) {
      return "gone";
    }
    if (this.store.isStored(rendition, index)) return "stored";
    await this.work.drop(staleViewerUnits(this.store.units(), new Set(this.waiters.keys()), { rendition, index }));
    if (this.store.covering(rendition, index).length === 0) {
      this.store.addUnit(viewerUnit(plan, rendition, index, this.clock()));
    }
    // Where a viewer is, the background goes next: the runs at and after the segment move first.
    this.store.rankRuns(-this.clock(), index, index + runLength(plan));
    const answer = this.waiters.waitFor(segmentWaited(rendition, index), WANT_TIMEOUT_MS, () => {});
    await this.work.schedule();
    return answer;
  }

  /**
   * A viewer asks for output frame `frame` at `width` pixels (pictures.mjs): made now unless it is
   * stored or being made; the answer comes as for `want` (`pending` after FRAME_WAIT_MS), or
   * `failed` when it could not be made. A frame not yet asked for counts against the video's frame
   * budget (frame-budget.ts): past it, the answer is `{ retryAfter }` and nothing is made. The
   * video must have a plan (playable, or ready).
   */
  async frame(frame: number, width: number): Promise<Outcome | "pending" | Limited> {
    const plan = this.store.plan();
    if (!plan || !this.store.serving()) return "gone";
    if (frame < 0 || frame >= plan.frames || width < MIN_STILL_WIDTH || width > topRendition(plan).width) return "gone";
    if (this.store.isFrameStored(frame, width)) return "stored";
    const id = `frame-${frame}-${width}`;
    if (!this.store.hasUnit(id)) {
      const now = this.clock();
      const admission = admitFrame(this.store.get<number[]>("frameAsks") ?? [], now);
      if (!admission.admitted) return { retryAfter: admission.retryAfter };
      this.store.set("frameAsks", admission.asks);
      this.store.addUnit({ id, kind: "frame", priority: "interactive", frame, width, rank: now });
    }
    // A frame nobody waits for any more is not made: its unit goes while it has not started (a
    // running job finishes, and its frame is kept).
    const answer = this.waiters.waitFor(frameWaited(frame, width), FRAME_WAIT_MS, () => this.store.dropQueuedUnit(id));
    await this.work.arm();
    await this.work.schedule();
    return answer;
  }

  /**
   * A generated caption track of the video is to be heard (again; docs/generated-captions.md). A
   * ready video whose coordinator kept nothing (it was encoded before coordinators kept their
   * state) is taken up from its row. When the video is neither being encoded nor ready, the track
   * fails: the captions are told.
   */
  async hear(video: Video, request: Omit<SpeechRequest, "chunks">) {
    await this.takeUpReady(video);
    if (!this.store.serving()) {
      this.store.set("video", video);
      await this.work.speech.ask({ ...request, chunks: null }, null);
      this.work.speech.failed(request.language, "The video has no source to hear: it was deleted or errored.");
      await this.work.speech.send();
      return;
    }
    await this.work.hear({ ...request, chunks: null });
  }

  /**
   * An added audio track of the video was put or deleted (docs/audio-tracks.md): the coordinator
   * makes what its row now names, and lets go of what it no longer does (coordinator-audio.ts).
   * Nothing is made for a video that is no longer served (deleted: its tracks go with it).
   */
  async audio(video: Video, language: string) {
    await this.takeUpReady(video);
    if (!this.store.serving()) return;
    await this.work.audio.changed(language);
    await this.work.arm();
    await this.work.schedule();
  }

  /**
   * A ready video whose coordinator kept nothing (it was encoded before coordinators kept their
   * state) is taken up from its row, for the work that goes on once a video is ready.
   */
  private async takeUpReady(video: Video) {
    if (this.store.phase() !== "idle") return;
    const row = await liveVideo(this.env.DB, video.videoId);
    const plan = row?.status === "ready" ? planOf(row) : null;
    if (row && plan) {
      this.store.set("video", video);
      this.store.set("plan", plan);
      this.store.set("source", sourceOf(row));
      this.store.set("phase", "ready");
    }
  }

  /**
   * Whether job `jobId` still runs here, and what the call-back routes need of it: the video, its
   * source's key (a clip's is the video it was cut from's; an audio job's, its track's own file),
   * the watermark image its settings named (the video's own copy is read first), and for a speech
   * job its track's request.
   */
  job(jobId: string): {
    kind: Kind;
    video: Video;
    sourceKey: string;
    watermarkKey: string | null;
    speech: SpeechRequest | null;
  } | null {
    const unit = this.store.serving() ? this.store.unitOfJob(jobId) : null;
    if (!unit) return null;
    const settings = this.store.get<EncodeSettings>("settings");
    const video = this.store.video();
    // A coordinator that claimed its video before clips existed kept no source: its video's own.
    const source =
      unit.kind === "audio"
        ? this.work.audio.sourceOf(unit)
        : (this.store.get<SourceOf>("source")?.key ?? sourceKey(video.projectId, video.videoId));
    if (source === null) return null;
    return {
      kind: unit.kind,
      video,
      sourceKey: source,
      watermarkKey: settings?.watermark?.imageKey ?? null,
      speech: unit.kind === "speech" ? this.work.speech.request(unit.language) : null,
    };
  }

  /** A heartbeat of job `jobId`: the slot it runs on (to keep its encoder awake), or null when it is void. */
  heartbeat(jobId: string): string | null {
    const unit = this.store.serving() ? this.store.unitOfJob(jobId) : null;
    if (!unit) return null;
    this.store.heard(unit.id, this.clock());
    return unit.slot ?? "";
  }

  /**
   * Job `jobId` is about to store segment `index` of `rendition`: `store` it under `key` (it is
   * reserved to the job), `skip` it (stored already, or another job is storing it: drop it), or
   * `void` (the job is).
   */
  reserveSegment(jobId: string, rendition: string, index: number): { verdict: "store" | "skip" | "void"; key: string } {
    const unit = this.store.active() ? this.store.unitOfJob(jobId) : null;
    const now = this.clock();
    const verdict = segmentVerdict(
      unit,
      jobId,
      { rendition, index, current: this.store.segment(rendition, index) },
      now,
    );
    if (verdict === "void") return { verdict, key: "" };
    const { projectId, videoId } = this.store.video();
    if (verdict === "store") this.store.reserve(rendition, index, jobId, now);
    return { verdict, key: segmentKey(projectId, videoId, rendition, segmentName(index)) };
  }

  /** The reserved segment is stored: viewers waiting for it get it. `void` when the video is gone. */
  segmentStored(jobId: string, rendition: string, index: number): "ok" | "void" {
    if (this.store.phase() === "cancelled" || this.store.phase() === "idle") return "void";
    this.store.stored(rendition, index, jobId, this.clock());
    this.waiters.wake(segmentWaited(rendition, index), "stored");
    return "ok";
  }

  /** Storing the reserved segment failed: another job may store it. */
  segmentAbandoned(jobId: string, rendition: string, index: number) {
    this.store.abandon(rendition, index, jobId);
  }

  /**
   * Audio job `jobId` is about to store segment `index` of its track: `store` it under `key` (the
   * track's generation's), `skip` it, or `void` (the job is: its track was put again or deleted).
   */
  reserveAudioSegment(jobId: string, index: number): { verdict: "store" | "skip" | "void"; key: string } {
    return this.work.audio.reserve(this.runningUnit(jobId), jobId, index);
  }

  /** The reserved audio segment is stored. `void` when its track is no longer made: then it goes. */
  audioSegmentStored(jobId: string, index: number): "ok" | "void" {
    return this.work.audio.stored(this.runningUnit(jobId), jobId, index);
  }

  /** Storing the reserved audio segment failed: another job may store it. */
  audioSegmentAbandoned(jobId: string, index: number) {
    this.work.audio.abandoned(this.runningUnit(jobId), jobId, index);
  }

  /** The unit job `jobId` runs, while the video is served. */
  private runningUnit(jobId: string) {
    return this.store.serving() ? this.store.unitOfJob(jobId) : null;
  }

  /**
   * Job `jobId` is about to store its picture (the poster, a frame or the storyboard): `store` it
   * under `key`, `skip` it (a frame stored already keeps its bytes), or `void` (the job is).
   */
  reserveStill(jobId: string): { verdict: "store" | "skip" | "void"; key: string } {
    const unit = this.store.serving() ? this.store.unitOfJob(jobId) : null;
    const { projectId, videoId } = this.store.video();
    switch (unit?.kind) {
      case "still":
        return { verdict: "store", key: posterKey(projectId, videoId) };
      case "storyboard":
        return { verdict: "store", key: storyboardKey(projectId, videoId) };
      case "frame": {
        const key = frameKey(projectId, videoId, unit.frame, unit.width);
        return { verdict: this.store.isFrameStored(unit.frame, unit.width) ? "skip" : "store", key };
      }
      default:
        return { verdict: "void", key: "" };
    }
  }

  /**
   * The reserved picture is stored: a frame's viewers get it. `void` when the video is gone (then
   * the picture goes too: the delete's clean-up may have listed the prefix before it arrived).
   */
  async stillStored(jobId: string): Promise<"ok" | "void"> {
    const unit = this.store.serving() ? this.store.unitOfJob(jobId) : null;
    if (!unit) return "void";
    if (unit.kind === "still") this.store.set("poster", true);
    if (unit.kind === "storyboard") this.store.set("storyboard", true);
    if (unit.kind === "frame") {
      // A ready video's deletion does not reach its coordinator: its row says.
      if (this.store.phase() === "ready" && !(await liveVideo(this.env.DB, this.store.video().videoId))) return "void";
      this.store.frameStored(unit.frame, unit.width);
      this.waiters.wake(frameWaited(unit.frame, unit.width), "stored");
    }
    return "ok";
  }

  /**
   * Job `jobId` is about to store storyboard tile `cue`, the frame of that cue at the tile width:
   * `store` it under `key`, `skip` it (that frame is stored already: it keeps its bytes), or `void`
   * (the job is, or the tile is not its own).
   */
  reserveTile(jobId: string, cue: number): { verdict: "store" | "skip" | "void"; key: string } {
    const unit = this.store.active() ? this.store.unitOfJob(jobId) : null;
    const tile = this.tile(cue);
    if (unit?.kind !== "tiles" || cue < unit.from || cue >= unit.to || !tile) return { verdict: "void", key: "" };
    return { verdict: this.store.isFrameStored(tile.frame, tile.width) ? "skip" : "store", key: tile.key };
  }

  /** Tile `cue` is stored (as its frame). `void` when the video is gone. */
  tileStored(jobId: string, cue: number): "ok" | "void" {
    const tile = this.tile(cue);
    if (!this.store.active() || this.store.unitOfJob(jobId)?.kind !== "tiles" || !tile) return "void";
    this.store.frameStored(tile.frame, tile.width);
    return "ok";
  }

  /** Where storyboard tile `cue` is stored, for the storyboard job `jobId` that tiles them; null when the job is void. */
  tileKey(jobId: string, cue: number): string | null {
    const unit = this.store.active() ? this.store.unitOfJob(jobId) : null;
    return unit?.kind === "storyboard" ? (this.tile(cue)?.key ?? null) : null;
  }

  /** Tile `cue` of the video's storyboard: its frame at the tile width, and that frame's key; null when there is no such cue. */
  private tile(cue: number) {
    const plan = this.store.plan();
    if (!plan) return null;
    const board = storyboard(plan);
    const frame = board.cues[cue]?.frame;
    if (frame === undefined) return null;
    const { projectId, videoId } = this.store.video();
    return { frame, width: board.tileWidth, key: frameKey(projectId, videoId, frame, board.tileWidth) };
  }

  /**
   * The fragments of every part of `file` but the first, in order, for job `jobId` writing the
   * first part's index; null when the job is void.
   */
  fileIndex(jobId: string, file: FileKind): Fragment[] | null {
    const unit = this.store.active() ? this.store.unitOfJob(jobId) : null;
    if (unit?.kind !== file) return null;
    return this.work.files.index(file);
  }

  /** The multipart upload of job `jobId`'s `file` (the MP4 or the M4A), or null when the job is void. */
  fileUpload(jobId: string, file: FileKind): Upload | null {
    const unit = this.store.active() ? this.store.unitOfJob(jobId) : null;
    return unit?.kind === file ? this.store.get<Upload>(file) : null;
  }

  /** The job's last message (checked by the route). False when the job is void (its answer is then 410). */
  async jobResult(jobId: string, result: Result): Promise<boolean> {
    const unit = this.store.serving() ? this.store.unitOfJob(jobId) : null;
    if (!unit || result.jobId !== jobId) return false;
    await this.work.ended(unit, result);
    return true;
  }

  /** The video was deleted: every job stops, every later call is told the job is gone. */
  cancel() {
    return this.work.cancel();
  }

  override async alarm() {
    await this.work.tick();
  }
}
