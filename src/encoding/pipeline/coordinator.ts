import { DurableObject } from "cloudflare:workers";
import { MIN_STILL_WIDTH } from "../../../media-plan/pictures.mjs";
import {
  type Plan,
  planEncoding,
  runLength,
  segmentCount,
  topRendition,
  Unplannable,
} from "../../../media-plan/plan.mjs";
import { type Job, type Priority, parsePlan, type Result, segmentName } from "../../../media-plan/protocol.mjs";
import { logError } from "../../lib/log";
import { frameKey, posterKey, segmentKey, storyboardKey } from "../../lib/storage-keys";
import { DEFAULT_SETTINGS } from "../settings";
import { callbackPath, callbackToken, encodingContext } from "./context";
import {
  abortUpload,
  completeUpload,
  type FileKind,
  isDone,
  isFileKind,
  openUpload,
  type Upload,
} from "./coordinator-files";
import { changeVideoRow, claimVideo } from "./coordinator-row";
import {
  filesOf,
  firstMissing,
  jobFor,
  missingRuns,
  renditionsOf,
  segmentsDone,
  segmentVerdict,
} from "./coordinator-rules";
import { EncodingStore, type Kind, type Unit } from "./coordinator-store";
import { poolOf } from "./coordinator-stub";
import { type Outcome, Waiters } from "./coordinator-waiters";
import { type EncodeSettings, planSettings, snapshot } from "./encode-settings";
import { admitFrame } from "./frame-budget";
import { type Change, liveVideo, recordHeartbeat } from "./queries";

/** Tries per unit of work: a job that fails or goes silent this many times errors the video. */
export const MAX_TRIES = 3;
/** A running job not heard from this long has lost its encoder: it is taken over. */
export const SILENCE_MS = 60_000;
/** A running job not heard from this long is asked about (a restarted encoder says it has none). */
export const QUIET_MS = 15_000;
/** How often the coordinator looks at its jobs while it has any. */
export const TICK_MS = 10_000;
/** How long a viewer's request for a segment waits for it before it is told to come back. */
export const WANT_TIMEOUT_MS = 25_000;
/**
 * How long a viewer's request for a frame waits for it (the contract's 5 s, and room for a busy
 * machine). A frame whose every viewer has stopped waiting and that has not started is dropped.
 */
export const FRAME_WAIT_MS = 10_000;
/** Segments a viewer's on-demand job makes: the one asked for and the next few, which come next. */
export const LOOKAHEAD = 3;
/** An encoder that said it was busy is asked again this much later. */
const BUSY_RETRY_MS = 500;
/** How often the video's row records that its encoding is alive. */
const ROW_HEARTBEAT_MS = 30_000;
/** A test video is encoded from its first seconds only (contract section 16). */
export const TEST_MODE_SECONDS = 10;

type Phase = "idle" | "waiting" | "encoding" | "ready" | "errored" | "cancelled";
type Video = { projectId: string; videoId: string };
/** A frame refused by the video's frame budget: the seconds until one frees. */
type Limited = { retryAfter: number };

/**
 * One video's encoding (contract sections 12 and 15), from its upload to `ready`: a Durable Object
 * per video (`idFromName(videoId)`), which owns what its encoding has made and still needs.
 *
 * The work comes in units, each one encoder job when it runs: the probe (interactive), then (once
 * the plan is made and the video is playable) the poster and background runs of a few segments of
 * every rendition,
 * and the storyboard, and the MP4 from the highest rendition's segments and the M4A from the lowest's
 * audio once they are all stored (coordinator-files.ts).
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
 */
export class VideoEncoding extends DurableObject<Env> {
  private readonly store: EncodingStore;
  private readonly waiters = new Waiters();
  private lastRowBeat = 0;
  /** Scheduling runs one at a time: it reads the free slots and queued units, then awaits. */
  private scheduling: Promise<void> = Promise.resolve();

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.store = new EncodingStore(ctx.storage.sql);
  }

  // ─── state ────────────────────────────────────────────────────────────────────────────────

  private phase(): Phase {
    return this.store.get<Phase>("phase") ?? "idle";
  }

  private video(): Video {
    const video = this.store.get<Video>("video");
    if (!video) throw new Error("the coordinator has no video");
    return video;
  }

  private plan(): Plan | null {
    const stored = this.store.get<unknown>("plan");
    return stored === null ? null : parsePlan(stored);
  }

  /** The video is being encoded. */
  private active(): boolean {
    const phase = this.phase();
    return phase === "waiting" || phase === "encoding";
  }

  /** Jobs may run: the video is being encoded, or it is ready and frames are made for viewers. */
  private serving(): boolean {
    return this.active() || this.phase() === "ready";
  }

  /** Where the encoding stands: for tests, and for the README's walk-through of the state. */
  state() {
    return {
      phase: this.phase(),
      plan: this.plan(),
      units: this.store.units(),
      slots: this.store.slots(),
      stored: this.store.storedCount(),
    };
  }

  // ─── what the Worker asks ─────────────────────────────────────────────────────────────────

  /** An uploaded video to encode (the encodings queue's message); again is harmless. */
  async start(video: Video) {
    if (this.phase() === "idle") {
      this.store.set("video", video);
      this.store.set("phase", "waiting");
      this.store.addUnit({ id: "probe", kind: "probe", priority: "interactive", rank: -2e15 });
    }
    await this.resume();
  }

  /** Looks at the jobs and the queue again (the sweep calls this for an encoding not heard from). */
  async resume() {
    if (!this.serving()) return;
    await this.arm();
    await this.checkJobs();
    await this.schedule();
  }

  /** The pool grants slots of `kind`: they run the queued units, or go back. */
  async granted(kind: Priority, slots: string[]) {
    for (const slot of slots) this.store.hold(slot, kind);
    if (!this.serving()) {
      await this.giveBack(slots);
      return;
    }
    await this.schedule();
  }

  /**
   * A viewer asks for segment `index` of `rendition`, not stored yet: it is made now if it is not
   * being made, and the answer comes when it is stored (`stored`), when the video will never have it
   * (`gone`), or after WANT_TIMEOUT_MS (`pending`).
   */
  async want(rendition: string, index: number): Promise<Outcome | "pending"> {
    const plan = this.plan();
    if (!plan || !this.active()) return this.phase() === "ready" ? "stored" : "gone";
    if (!plan.renditions.some((r) => r.resolution === rendition) || index < 0 || index >= segmentCount(plan)) {
      return "gone";
    }
    if (this.store.isStored(rendition, index)) return "stored";
    if (this.store.covering(rendition, index).length === 0) {
      const last = Math.min(segmentCount(plan), index + LOOKAHEAD);
      this.store.addUnit({
        id: `live-${rendition}-${index}`,
        kind: "segments",
        priority: "interactive",
        rendition,
        first: index,
        last,
        rank: Date.now(),
      });
    }
    // Where a viewer is, the background goes next: the runs at and after the segment move first.
    this.store.rankRuns(-Date.now(), index, index + runLength(plan));
    const answer = this.waiters.waitFor(`${rendition}/${index}`, WANT_TIMEOUT_MS, () => {});
    await this.schedule();
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
    const plan = this.plan();
    if (!plan || !this.serving()) return "gone";
    if (frame < 0 || frame >= plan.frames || width < MIN_STILL_WIDTH || width > topRendition(plan).width) return "gone";
    if (this.store.isFrameStored(frame, width)) return "stored";
    const id = `frame-${frame}-${width}`;
    if (!this.store.hasUnit(id)) {
      const now = Date.now();
      const admission = admitFrame(this.store.get<number[]>("frameAsks") ?? [], now);
      if (!admission.admitted) return { retryAfter: admission.retryAfter };
      this.store.set("frameAsks", admission.asks);
      this.store.addUnit({ id, kind: "frame", priority: "interactive", first: frame, last: width, rank: now });
    }
    // A frame nobody waits for any more is not made: its unit goes while it has not started (a
    // running job finishes, and its frame is kept).
    const answer = this.waiters.waitFor(`frame/${frame}/${width}`, FRAME_WAIT_MS, () => this.store.dropQueuedUnit(id));
    await this.arm();
    await this.schedule();
    return answer;
  }

  /**
   * Whether job `jobId` still runs here, and what the call-back routes need of it: the video, and
   * the watermark image its settings named (the video's own copy is read first).
   */
  job(jobId: string): { kind: Kind; video: Video; watermarkKey: string | null } | null {
    const unit = this.serving() ? this.store.unitOfJob(jobId) : null;
    if (!unit) return null;
    const settings = this.store.get<EncodeSettings>("settings");
    return { kind: unit.kind, video: this.video(), watermarkKey: settings?.watermark?.imageKey ?? null };
  }

  /** A heartbeat of job `jobId`: the slot it runs on (to keep its encoder awake), or null when it is void. */
  heartbeat(jobId: string): string | null {
    const unit = this.serving() ? this.store.unitOfJob(jobId) : null;
    if (!unit) return null;
    this.store.heard(unit.id, Date.now());
    return unit.slot ?? "";
  }

  /**
   * Job `jobId` is about to store segment `index` of `rendition`: `store` it under `key` (it is
   * reserved to the job), `skip` it (stored already, or another job is storing it: drop it), or
   * `void` (the job is).
   */
  reserveSegment(jobId: string, rendition: string, index: number): { verdict: "store" | "skip" | "void"; key: string } {
    const unit = this.active() ? this.store.unitOfJob(jobId) : null;
    const now = Date.now();
    const verdict = segmentVerdict(
      unit,
      jobId,
      { rendition, index, current: this.store.segment(rendition, index) },
      now,
    );
    if (verdict === "void") return { verdict, key: "" };
    const { projectId, videoId } = this.video();
    if (verdict === "store") this.store.reserve(rendition, index, jobId, now);
    return { verdict, key: segmentKey(projectId, videoId, rendition, segmentName(index)) };
  }

  /** The reserved segment is stored: viewers waiting for it get it. `void` when the video is gone. */
  segmentStored(jobId: string, rendition: string, index: number): "ok" | "void" {
    if (this.phase() === "cancelled" || this.phase() === "idle") return "void";
    this.store.stored(rendition, index, jobId, Date.now());
    this.waiters.wake(`${rendition}/${index}`, "stored");
    return "ok";
  }

  /** Storing the reserved segment failed: another job may store it. */
  segmentAbandoned(jobId: string, rendition: string, index: number) {
    this.store.abandon(rendition, index, jobId);
  }

  /**
   * Job `jobId` is about to store its picture (the poster, a frame or the storyboard): `store` it
   * under `key`, `skip` it (a frame stored already keeps its bytes), or `void` (the job is).
   */
  reserveStill(jobId: string): { verdict: "store" | "skip" | "void"; key: string } {
    const unit = this.serving() ? this.store.unitOfJob(jobId) : null;
    const { projectId, videoId } = this.video();
    switch (unit?.kind) {
      case "still":
        return { verdict: "store", key: posterKey(projectId, videoId) };
      case "storyboard":
        return { verdict: "store", key: storyboardKey(projectId, videoId) };
      case "frame": {
        const key = frameKey(projectId, videoId, unit.first, unit.last);
        return { verdict: this.store.isFrameStored(unit.first, unit.last) ? "skip" : "store", key };
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
    const unit = this.serving() ? this.store.unitOfJob(jobId) : null;
    if (!unit) return "void";
    if (unit.kind === "still") this.store.set("poster", true);
    if (unit.kind === "storyboard") this.store.set("storyboard", true);
    if (unit.kind === "frame") {
      // A ready video's deletion does not reach its coordinator: its row says.
      if (this.phase() === "ready" && !(await liveVideo(this.env.DB, this.video().videoId))) return "void";
      this.store.frameStored(unit.first, unit.last);
      this.waiters.wake(`frame/${unit.first}/${unit.last}`, "stored");
    }
    return "ok";
  }

  /** The multipart upload of job `jobId`'s `file` (the MP4 or the M4A), or null when the job is void. */
  fileUpload(jobId: string, file: FileKind): Upload | null {
    const unit = this.active() ? this.store.unitOfJob(jobId) : null;
    return unit?.kind === file ? this.store.get<Upload>(file) : null;
  }

  /** The job's last message (checked by the route). False when the job is void (its answer is then 410). */
  async jobResult(jobId: string, result: Result): Promise<boolean> {
    const unit = this.serving() ? this.store.unitOfJob(jobId) : null;
    if (!unit || result.jobId !== jobId) return false;
    const slot = unit.slot;
    // A probe's, an MP4's or an M4A's result without what it made is as good as a failure.
    const incomplete =
      result.status === "done" &&
      ((unit.kind === "probe" && !result.probe) ||
        (unit.kind === "mp4" && !result.mp4) ||
        (unit.kind === "m4a" && !result.m4a));
    if (result.status === "failed" || incomplete) {
      if (result.status === "failed" && result.code === "invalid_source" && unit.kind === "probe") {
        await this.finish({ status: "errored", code: "invalid_source", message: result.message });
        return true;
      }
      // An encoder stopped from outside (a redeploy, say) did not fail the work: no try is counted.
      await this.failed(unit, !(result.status === "failed" && result.code === "interrupted"));
    } else {
      this.store.deleteUnit(unit.id);
      if (unit.kind === "probe" && result.probe) await this.planned(result.probe);
      else if (unit.kind === "mp4" && result.mp4)
        await completeUpload(this.store, this.env.MEDIA, "mp4", result.mp4.parts);
      else if (unit.kind === "m4a" && result.m4a)
        await completeUpload(this.store, this.env.MEDIA, "m4a", result.m4a.parts);
      else if (unit.kind === "frame" && !this.store.isFrameStored(unit.first, unit.last)) {
        // Done without storing it (a job cannot): its viewers are told.
        this.waiters.wake(`frame/${unit.first}/${unit.last}`, "failed");
      }
    }
    // The slot goes back to the pool, which hands it to whoever is next by its fair order.
    if (slot) await this.giveBack([slot]);
    await this.progress();
    return true;
  }

  /** The video was deleted: every job stops, every later call is told the job is gone. */
  async cancel() {
    const phase = this.phase();
    if (phase === "cancelled" || phase === "idle") {
      this.store.set("phase", "cancelled");
      return;
    }
    this.store.set("phase", "cancelled");
    await this.stopEverything();
  }

  override async alarm() {
    if (!this.serving()) return;
    await this.checkJobs();
    await this.schedule();
    const slots = this.store.slots().map((held) => held.slot);
    if (slots.length > 0) await poolOf(this.env).renew(this.video().videoId, slots);
    if (Date.now() - this.lastRowBeat >= ROW_HEARTBEAT_MS && this.phase() === "encoding") {
      this.lastRowBeat = Date.now();
      await recordHeartbeat(this.env.DB, this.video().videoId, Date.now()).catch((error) =>
        logError("encoding: record heartbeat", error, { videoId: this.video().videoId }),
      );
    }
    await this.arm();
  }

  // ─── how the work moves ───────────────────────────────────────────────────────────────────

  private async arm() {
    const working = this.active() || (this.serving() && this.store.units().length > 0);
    if (working && (await this.ctx.storage.getAlarm()) === null) {
      await this.ctx.storage.setAlarm(Date.now() + TICK_MS);
    }
  }

  /**
   * Puts queued units on the slots this video holds, and asks the pool for what more it could use
   * now (or gives back what it cannot use). One at a time.
   */
  private schedule(): Promise<void> {
    const next = this.scheduling.then(() => this.scheduleNow());
    this.scheduling = next.catch((error) => logError("encoding: schedule", error));
    return next;
  }

  private async scheduleNow(): Promise<void> {
    if (!this.serving()) return;
    const video = this.video();
    // A ready video's deletion reaches its coordinator through the deletions queue, a moment
    // later: no frame of it starts meanwhile (its row says), and every other goes with it.
    if (this.phase() === "ready" && this.store.queued("interactive").length > 0) {
      if (!(await liveVideo(this.env.DB, video.videoId))) {
        await this.cancel();
        return;
      }
    }
    for (const kind of ["interactive", "background"] as const) {
      const idle = this.store.idleSlots(kind);
      const queued = this.store.queued(kind);
      const dispatching: Promise<void>[] = [];
      while (idle.length > 0 && queued.length > 0) {
        dispatching.push(this.dispatch(idle.shift() as string, queued.shift() as Unit));
      }
      await Promise.all(dispatching);
      if (idle.length > 0) await this.giveBack(idle);
      const want = this.store.queued(kind).length;
      const granted = await poolOf(this.env).acquire({
        videoId: video.videoId,
        projectId: video.projectId,
        kind,
        want,
      });
      if (granted.length > 0) {
        for (const slot of granted) this.store.hold(slot, kind);
        await this.scheduleNow();
        return;
      }
    }
  }

  /** Runs `unit` on `slot`: its job goes to the encoder there. */
  private async dispatch(slot: string, unit: Unit) {
    const video = this.video();
    const sequence = (this.store.get<number>("jobs") ?? 0) + 1;
    this.store.set("jobs", sequence);
    // Unique on any encoder: the video's id, the unit and the job's number.
    const jobId = `${video.videoId}-${unit.id.replace(/[^A-Za-z0-9_-]/g, "")}-${sequence}`;
    const now = Date.now();
    this.store.started(unit.id, jobId, slot, now);
    try {
      if (unit.kind === "probe" && !(await this.claim())) return;
      const job = await this.jobOf(unit, jobId);
      if (!job) {
        // Nothing left to make in this unit (stored meanwhile): the slot takes the next unit.
        this.store.deleteUnit(unit.id);
        return;
      }
      const { encoder } = encodingContext(this.env);
      const answer = await encoder.start(slot, job);
      if (answer === "accepted") return;
      this.store.unstarted(unit.id);
      if (answer === "busy") {
        // The encoder there is still busy with a job it was told to stop: the slot is kept (so the
        // pool does not hand it straight back) and tried again a little later.
        await this.ctx.storage.setAlarm(Date.now() + BUSY_RETRY_MS);
        return;
      }
      await this.giveBack([slot]);
      await this.failed({ ...unit, job: jobId, slot: null });
    } catch (error) {
      // No answer: the job may be running; its silence ends it if it is not.
      logError("encoding: start a job", error, { videoId: video.videoId, jobId });
    }
  }

  /** The job of `unit` now; null for a segments unit with nothing left to make. */
  private async jobOf(unit: Unit, jobId: string): Promise<Job | null> {
    const { config } = encodingContext(this.env);
    const video = this.video();
    const origin = config.callbackOrigin;
    if (!origin) throw new Error("ENCODER_CALLBACK_URL or PUBLIC_BASE_URL must be set for the encoder to call back");
    const path = { ...video, jobId };
    const callback = {
      baseUrl: `${origin}${callbackPath(path)}`,
      token: await callbackToken(config.callbackSecret, path),
    };
    const base = { version: 2, jobId, priority: unit.priority, callback } as const;
    const plan = this.plan();
    // One multipart upload per try of a file (a failed try aborts it): a job started again after a
    // busy answer writes into the same one.
    if (isFileKind(unit.kind)) await openUpload(this.store, this.env.MEDIA, unit.kind, video);
    const missing =
      unit.kind === "segments" && plan
        ? renditionsOf(unit, plan).filter(
            (rendition) => this.store.storedIn(rendition, unit.first, unit.last) < unit.last - unit.first,
          )
        : [];
    return jobFor(unit, base, plan, missing);
  }

  /**
   * The video becomes `processing` as its first job starts. False when it cannot (deleted
   * meanwhile): everything stops.
   */
  private async claim(): Promise<boolean> {
    const claimed = await claimVideo(this.env, this.video());
    if (!claimed) {
      await this.cancel();
      return false;
    }
    this.store.set("settings", claimed.settings);
    this.store.set("testMode", claimed.testMode);
    return true;
  }

  /** The probe's facts: the plan is made, the video becomes playable, the work is queued. */
  private async planned(probe: NonNullable<Extract<Result, { status: "done" }>["probe"]>) {
    const settings = this.store.get<EncodeSettings>("settings") ?? snapshot(DEFAULT_SETTINGS);
    let plan: Plan;
    try {
      plan = planEncoding(probe, planSettings(settings), {
        maxDuration: this.store.get<boolean>("testMode") ? TEST_MODE_SECONDS : undefined,
      });
    } catch (error) {
      if (!(error instanceof Unplannable)) throw error;
      await this.finish({
        status: "errored",
        code: "invalid_source",
        message: `The source is not a video this service encodes: ${error.message}.`,
      });
      return;
    }
    const playable = await changeVideoRow(this.env, this.video().videoId, {
      status: "playable",
      plan: JSON.stringify(plan),
      duration: plan.duration,
      width: plan.width,
      height: plan.height,
    });
    if (!playable) {
      await this.cancel();
      return;
    }
    this.store.set("plan", plan);
    this.store.set("phase", "encoding");
    this.repair();
  }

  /**
   * Gives every segment that is neither stored nor covered by a unit a background unit, in runs of
   * `runLength`, in order.
   */
  private repair() {
    const plan = this.plan();
    if (!plan) return;
    // The poster is the first background job (interactive slots are for probes and viewers), the
    // storyboard comes after the first run of segments.
    if (!this.store.get<boolean>("poster")) {
      this.store.addUnit({ id: "poster", kind: "still", priority: "background", rank: -1e15 });
    }
    if (!this.store.get<boolean>("storyboard")) {
      this.store.addUnit({ id: "storyboard", kind: "storyboard", priority: "background", rank: 0.5 });
    }
    const covered = new Set<number>();
    for (const unit of this.store.backgroundRuns()) {
      for (let i = unit.first; i < unit.last; i++) covered.add(i);
    }
    for (const { first, last } of missingRuns(plan, covered, (rendition) => this.store.storedOf(rendition))) {
      this.store.addUnit({ id: `run-${first}`, kind: "segments", priority: "background", first, last, rank: first });
    }
  }

  /**
   * After a unit ends: what is missing gets units again; a complete video gets its MP4 and its M4A
   * (when it has audio; two units, which run side by side when the video holds two slots), then is
   * ready.
   */
  private async progress() {
    if (this.phase() !== "encoding") {
      await this.schedule();
      return;
    }
    this.repair();
    const plan = this.plan() as Plan;
    const done = {
      storedSegments: this.store.storedCount(),
      segmentUnits: this.store.segmentUnits().length,
      poster: this.store.get<boolean>("poster") === true,
      storyboard: this.store.get<boolean>("storyboard") === true,
    };
    if (segmentsDone(plan, done)) {
      const files = filesOf(plan).filter((file) => !isDone(this.store, file));
      if (files.length === 0) {
        await this.finish({
          status: "ready",
          renditions: plan.renditions.map(({ resolution, width, height }) => ({ resolution, width, height })),
          mp4: plan.mp4,
          m4a: plan.audio,
        });
        return;
      }
      for (const file of files) {
        this.store.addUnit({ id: file, kind: file, priority: "background", rank: file === "mp4" ? -3e15 : -2.9e15 });
      }
    }
    await this.schedule();
  }

  /**
   * A unit's job failed or went silent: it runs again from what is missing, or, after MAX_TRIES
   * counted tries, the video errors (a frame is refused instead).
   */
  private async failed(unit: Unit, counted = true) {
    const tries = unit.tries + (counted ? 1 : 0);
    if (isFileKind(unit.kind)) await this.abortFile(unit.kind);
    if (unit.kind === "frame" && tries >= MAX_TRIES) {
      this.store.deleteUnit(unit.id);
      this.waiters.wake(`frame/${unit.first}/${unit.last}`, "failed");
      return;
    }
    if (tries >= MAX_TRIES) {
      await this.finish({
        status: "errored",
        code: "encoding_failed",
        message: `The video could not be encoded: ${MAX_TRIES} attempts failed.`,
      });
      return;
    }
    const first =
      unit.kind === "segments"
        ? firstMissing(unit, this.plan() as Plan, (rendition, index) => this.store.isStored(rendition, index))
        : unit.first;
    if (unit.kind === "segments" && first >= unit.last) {
      this.store.deleteUnit(unit.id);
      return;
    }
    this.store.requeue(unit.id, tries, first);
  }

  private abortFile(file: FileKind) {
    return abortUpload(this.store, this.env.MEDIA, file, (error, key) =>
      logError(`encoding: abort the ${file} upload`, error, { key }),
    );
  }

  /**
   * Running jobs not heard from: asked about after QUIET_MS (an encoder that restarted says it has
   * no such job), taken over after SILENCE_MS. A taken-over job is stopped where it may still run.
   */
  private async checkJobs() {
    const now = Date.now();
    const { encoder } = encodingContext(this.env);
    for (const unit of this.store.quietSince(now - QUIET_MS)) {
      let lost = (unit.heard ?? 0) < now - SILENCE_MS;
      if (!lost && unit.slot) {
        lost = await encoder.status(unit.slot, unit.job as string).then(
          (status) => status === "unknown",
          () => false,
        );
      }
      if (!lost) continue;
      // Still the same job (a result may have come meanwhile)?
      if (this.store.unitOfJob(unit.job as string) === null) continue;
      if (unit.slot) {
        await encoder
          .cancel(unit.slot, unit.job as string)
          .catch((error) => logError("encoding takeover: cancel", error, { jobId: unit.job }));
      }
      await this.failed(unit);
      if (unit.slot) await this.giveBack([unit.slot]);
    }
    await this.progress();
  }

  private async giveBack(slots: string[]) {
    if (slots.length === 0) return;
    for (const slot of slots) this.store.release(slot);
    await poolOf(this.env).release(this.video().videoId, slots);
  }

  /** The video's row changes, with its event, published now. Null when the video is gone. */
  /** Ready or errored: the row and its event, then every job and slot goes. */
  private async finish(change: Extract<Change, { status: "ready" | "errored" }>) {
    this.store.set("phase", change.status);
    const changed = await changeVideoRow(this.env, this.video().videoId, change);
    if (!changed) this.store.set("phase", "cancelled");
    if (change.status === "errored") {
      const { media } = encodingContext(this.env);
      const { projectId, videoId } = this.video();
      await media.delete(posterKey(projectId, videoId)).catch(() => {});
    }
    await this.stopEverything();
  }

  /**
   * Stops every running job, gives every slot back, answers every waiting viewer; once the video
   * is ready, its frames' units keep running (and their slots and viewers).
   */
  private async stopEverything() {
    const ready = this.phase() === "ready";
    const { encoder } = encodingContext(this.env);
    const running = this.store.running(ready);
    await Promise.all(
      running.map((unit) =>
        encoder
          .cancel(unit.slot as string, unit.job as string)
          .catch((error) => logError("encoding: cancel a job", error, { jobId: unit.job })),
      ),
    );
    if (!ready) {
      await this.abortFile("mp4");
      await this.abortFile("m4a");
    }
    this.store.deleteUnits(ready);
    this.store.clearSegments();
    for (const key of this.waiters.keys()) {
      if (!(ready && key.startsWith("frame/"))) this.waiters.wake(key, ready ? "stored" : "gone");
    }
    if (this.store.units().length > 0) {
      await this.giveBack(this.store.idleSlots());
      return;
    }
    this.store.releaseAll();
    const video = this.store.get<Video>("video");
    if (video)
      await poolOf(this.env)
        .forget(video.videoId)
        .catch((error) => logError("encoding: free the slots", error, { videoId: video.videoId }));
    await this.ctx.storage.deleteAlarm();
  }
}
