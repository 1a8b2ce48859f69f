import type { PartStep } from "../../../media-plan/files.mjs";
import { storyboard } from "../../../media-plan/pictures.mjs";
import type { Plan } from "../../../media-plan/plan.mjs";
import type { Job, Result } from "../../../media-plan/protocol.mjs";
import { languageOfCode } from "../../lib/language";
import { logError } from "../../lib/log";
import { posterKey } from "../../lib/storage-keys";
import { DEFAULT_SETTINGS } from "../settings";
import { encodingContext, jobCallback } from "./context";
import { AudioWork } from "./coordinator-audio";
import { FileWork, isFileKind } from "./coordinator-files";
import { cutToPace, takePace } from "./coordinator-pace";
import { changeVideoRow, claimVideo } from "./coordinator-row";
import {
  filesOf,
  fileUnit,
  firstMissing,
  firstView,
  jobFor,
  MAX_TRIES,
  madeNothing,
  missingUnits,
  planOf,
  QUIET_MS,
  renditionsOf,
  SILENCE_MS,
  type SourceOf,
  segmentsDone,
} from "./coordinator-rules";
import { SpeechWork } from "./coordinator-speech";
import type { SpeechRequest } from "./coordinator-speech-store";
import type { EncodingStore, Unit, Video } from "./coordinator-store";
import { poolOf } from "./coordinator-stub";
import { frameWaited, isFrameWaited, type Waiters } from "./coordinator-waiters";
import { type EncodeSettings, snapshot } from "./encode-settings";
import { type Change, liveVideo, recordHeartbeat } from "./queries";

/** How often the coordinator looks at its jobs while it has any. */
export const TICK_MS = 10_000;
/** An encoder that said it was busy is asked again this much later. */
export const BUSY_RETRY_MS = 500;
/** How often the video's row records that its encoding is alive. */
export const ROW_HEARTBEAT_MS = 30_000;

/** How a video ends when one of its units failed every try. */
const ENCODING_FAILED = {
  status: "errored",
  code: "encoding_failed",
  message: `The video could not be encoded: ${MAX_TRIES} attempts failed.`,
} as const;

/**
 * How a video's encoding moves, for its Durable Object (coordinator.ts, which answers the Worker
 * and the encoder's call-backs): units put on the slots the video holds and more asked of the pool
 * (`schedule`), each job's message and its dispatch, the probe's plan, what is still needed after
 * a unit ends (`progress`), failures and silent jobs (tried again up to MAX_TRIES), and the end
 * (ready, errored or cancelled: every job stopped, every slot given back, every viewer answered).
 */
export class EncodingWork {
  private lastRowBeat = 0;
  /** The hearing of speech for generated captions (coordinator-speech.ts). */
  readonly speech: SpeechWork;
  /** The making of added audio tracks (coordinator-audio.ts). */
  readonly audio: AudioWork;
  /** The MP4 and the M4A, put together a part per job (coordinator-files.ts). */
  readonly files: FileWork;
  /** Scheduling runs one at a time: it reads the free slots and queued units, then awaits. */
  private scheduling: Promise<void> = Promise.resolve();

  constructor(
    private readonly ctx: DurableObjectState,
    private readonly env: Env,
    private readonly store: EncodingStore,
    private readonly waiters: Waiters,
    private readonly clock: () => number,
  ) {
    this.speech = new SpeechWork(env, store, ctx.storage.sql);
    this.audio = new AudioWork(env, store, ctx.storage.sql, clock);
    this.files = new FileWork(store, ctx.storage.sql, env.MEDIA, MAX_TRIES);
  }

  /** Job of `unit` sent its last message: what it made is kept, or it runs again; its slot goes back. */
  async ended(unit: Unit, result: Result) {
    const slot = unit.slot;
    if (result.status === "failed" || madeNothing(unit, result)) {
      if (result.status === "failed" && result.code === "invalid_source" && unit.kind === "probe") {
        await this.finish({ status: "errored", code: "invalid_source", message: result.message });
        return;
      }
      // A track's file that is not audio errors the track at once (never the video).
      if (result.status === "failed" && result.code === "invalid_source" && unit.kind === "audio") {
        await this.audio.invalid(unit.language, result.message);
      } else {
        // An encoder stopped from outside (a redeploy, say) did not fail the work: no try is counted.
        await this.failed(unit, !(result.status === "failed" && result.code === "interrupted"));
      }
    } else {
      this.store.deleteUnit(unit.id);
      takePace(this.store, unit, this.clock());
      if (unit.kind === "probe" && result.probe) await this.planned(result.probe);
      else if (isFileKind(unit.kind)) {
        const kept = await this.files.partMade(unit.kind, this.store.plan() as Plan, result[unit.kind]);
        if (!kept) await this.finish(ENCODING_FAILED);
      } else if (unit.kind === "speech" && result.speech) {
        await this.speech.heard(unit.language, unit.chunk, result.speech.words);
        await this.speech.send();
      } else if (unit.kind === "audio") {
        await this.audio.ran(unit.language);
      } else if (unit.kind === "frame" && !this.store.isFrameStored(unit.frame, unit.width)) {
        // Done without storing it (a job cannot): its viewers are told.
        this.waiters.wake(frameWaited(unit.frame, unit.width), "failed");
      }
    }
    // The slot goes back to the pool, which hands it to whoever is next by its fair order.
    if (slot) await this.giveBack([slot]);
    await this.progress();
  }

  /** The video was deleted: every job stops, every later call is told the job is gone. */
  async cancel() {
    const phase = this.store.phase();
    if (phase === "cancelled" || phase === "idle") {
      this.store.set("phase", "cancelled");
      return;
    }
    this.store.set("phase", "cancelled");
    this.speech.stop("deleted");
    this.audio.stop();
    await this.stopEverything();
  }

  /** The alarm: jobs looked at, the queue scheduled, slots renewed, the row told the encoding is alive. */
  async tick() {
    await this.speech.send();
    if (!this.store.serving()) return;
    await this.checkJobs();
    await this.schedule();
    const slots = this.store.slots().map((held) => held.slot);
    if (slots.length > 0) await poolOf(this.env).renew(this.store.video().videoId, slots);
    const now = this.clock();
    if (now - this.lastRowBeat >= ROW_HEARTBEAT_MS && this.store.phase() === "encoding") {
      this.lastRowBeat = now;
      await recordHeartbeat(this.env.DB, this.store.video().videoId, now).catch((error) =>
        logError("encoding: record heartbeat", error, { videoId: this.store.video().videoId }),
      );
    }
    await this.arm();
  }

  async arm() {
    const working =
      this.store.active() || (this.store.serving() && this.store.units().length > 0) || this.speech.pending();
    if (working && (await this.ctx.storage.getAlarm()) === null) {
      await this.ctx.storage.setAlarm(this.clock() + TICK_MS);
    }
  }

  /**
   * Puts queued units on the slots this video holds, and asks the pool for what more it could use
   * now (or gives back what it cannot use). One at a time.
   */
  schedule(): Promise<void> {
    const next = this.scheduling.then(() => this.scheduleNow());
    this.scheduling = next.catch((error) => logError("encoding: schedule", error));
    return next;
  }

  private async scheduleNow(): Promise<void> {
    if (!this.store.serving()) return;
    const video = this.store.video();
    // A ready video's deletion reaches its coordinator through the deletions queue, a moment
    // later: no frame or speech of it starts meanwhile (its row says), and every other goes with it.
    const queued = this.store.queued("interactive").length + this.store.queued("background").length;
    if (this.store.phase() === "ready" && queued > 0) {
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
    const video = this.store.video();
    const sequence = (this.store.get<number>("jobs") ?? 0) + 1;
    this.store.set("jobs", sequence);
    // Unique on any encoder: the video's id, the unit and the job's number.
    const jobId = `${video.videoId}-${unit.id.replace(/[^A-Za-z0-9_-]/g, "")}-${sequence}`;
    cutToPace(this.store, unit);
    this.store.started(unit.id, jobId, slot, this.clock());
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
        await this.ctx.storage.setAlarm(this.clock() + BUSY_RETRY_MS);
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
    const video = this.store.video();
    const callback = await jobCallback(encodingContext(this.env).config, { ...video, jobId });
    const base = { version: 2, jobId, priority: unit.priority, callback } as const;
    const plan = this.store.plan();
    // One multipart upload per file, its parts made one job at a time and kept until it completes.
    let step: PartStep | null = null;
    if (isFileKind(unit.kind) && plan) {
      step = await this.files.step(unit.kind, plan, video);
      if (step === null) return null;
    }
    const missing =
      unit.kind === "segments" && plan
        ? renditionsOf(unit, plan).filter(
            (rendition) => this.store.storedIn(rendition, unit.from, unit.to) < unit.to - unit.from,
          )
        : [];
    const speech = unit.kind === "speech" ? this.speech.request(unit.language) : null;
    return jobFor(unit, base, plan, missing, { step, speech });
  }

  /**
   * The video becomes `processing` as its first job starts. False when it cannot (deleted
   * meanwhile): everything stops.
   */
  private async claim(): Promise<boolean> {
    const claimed = await claimVideo(this.env, this.store.video(), this.clock());
    if (!claimed) {
      await this.cancel();
      return false;
    }
    this.store.set("settings", claimed.settings);
    this.store.set("testMode", claimed.testMode);
    this.store.set("source", claimed.source);
    this.store.set("generatedCaptions", claimed.generatedCaptions);
    return true;
  }

  /** The probe's facts: the plan is made, the video becomes playable, the work is queued. */
  private async planned(probe: NonNullable<Extract<Result, { status: "done" }>["probe"]>) {
    const planned = planOf(probe, {
      settings: this.store.get<EncodeSettings>("settings") ?? snapshot(DEFAULT_SETTINGS),
      testMode: this.store.get<boolean>("testMode") ?? false,
      clip: this.store.get<SourceOf>("source")?.clip ?? null,
    });
    if ("unplannable" in planned) {
      await this.finish({ status: "errored", code: "invalid_source", message: planned.unplannable });
      return;
    }
    const { plan } = planned;
    const playable = await changeVideoRow(this.env, this.store.video().videoId, this.clock(), {
      status: "playable",
      plan: JSON.stringify(plan),
      duration: plan.duration,
      width: plan.width,
      height: plan.height,
      audioLanguage: languageOfCode(probe.audioLanguage),
    });
    if (!playable) {
      await this.cancel();
      return;
    }
    this.store.set("plan", plan);
    this.store.set("phase", "encoding");
    this.store.addUnit(firstView(plan, this.clock()));
    this.repair();
    this.speech.planned(plan);
    this.speech.playable(this.store.get<string[]>("generatedCaptions") ?? []);
    await this.speech.send();
  }

  /** A generated caption track is asked for (again): heard once the video has a plan (coordinator-speech.ts). */
  async hear(request: SpeechRequest) {
    await this.speech.ask(request, this.store.plan());
    await this.speech.send();
    await this.arm();
    await this.schedule();
  }

  /** Every unit the plan still needs and the store lacks is added (`missingUnits`). */
  private repair() {
    const plan = this.store.plan();
    if (!plan) return;
    const board = storyboard(plan);
    const has = {
      poster: this.store.get<boolean>("poster") === true,
      storyboard: this.store.get<boolean>("storyboard") === true,
      runs: this.store.backgroundRuns(),
      tiles: this.store.tileUnits(),
      tileStored: (cue: number) => this.store.isFrameStored(board.cues[cue]?.frame ?? -1, board.tileWidth),
    };
    for (const unit of missingUnits(plan, has, (rendition) => this.store.storedOf(rendition))) {
      this.store.addUnit(unit);
    }
  }

  /**
   * After a unit ends: what is missing gets units again; a complete video gets its MP4 and its M4A
   * (when it has audio; two units, which run side by side when the video holds two slots), then is
   * ready.
   */
  private async progress() {
    if (this.store.phase() !== "encoding") {
      await this.schedule();
      return;
    }
    this.repair();
    const plan = this.store.plan() as Plan;
    const done = {
      storedSegments: this.store.storedCount(),
      segmentUnits: this.store.segmentUnits().length,
      poster: this.store.get<boolean>("poster") === true,
      storyboard: this.store.get<boolean>("storyboard") === true,
    };
    if (segmentsDone(plan, done)) {
      const files = this.files.pending(filesOf(plan));
      if (files.length === 0) {
        await this.finish({
          status: "ready",
          renditions: plan.renditions.map(({ resolution, width, height }) => ({ resolution, width, height })),
          mp4: plan.mp4,
          m4a: plan.audio,
        });
        return;
      }
      for (const file of files) this.store.addUnit(fileUnit(file));
    }
    await this.schedule();
  }

  /**
   * A unit's job failed or went silent: it runs again from what is missing, or, after MAX_TRIES
   * counted tries, the video errors (a frame is refused instead).
   */
  private async failed(unit: Unit, counted = true) {
    const tries = unit.tries + (counted ? 1 : 0);
    if (unit.kind === "frame" && tries >= MAX_TRIES) {
      this.store.deleteUnit(unit.id);
      this.waiters.wake(frameWaited(unit.frame, unit.width), "failed");
      return;
    }
    // An added audio track's run runs again, or fails the track: never the video.
    if (unit.kind === "audio") {
      await this.audio.failed(unit, tries);
      return;
    }
    // A track's speech that cannot be heard fails the track, never the video.
    if (unit.kind === "speech" && tries >= MAX_TRIES) {
      this.speech.failed(unit.language, `The speech could not be heard: ${MAX_TRIES} attempts failed.`);
      await this.speech.send();
      return;
    }
    if (tries >= MAX_TRIES) {
      await this.finish(ENCODING_FAILED);
      return;
    }
    if (unit.kind === "segments") {
      const from = firstMissing(unit, this.store.plan() as Plan, (r, index) => this.store.isStored(r, index));
      if (from >= unit.to) {
        this.store.deleteUnit(unit.id);
        return;
      }
      this.store.requeueFrom(unit, from, tries);
      return;
    }
    this.store.requeue(unit.id, tries);
  }

  /**
   * Running jobs not heard from: asked about after QUIET_MS (an encoder that restarted says it has
   * no such job), taken over after SILENCE_MS. A taken-over job is stopped where it may still run.
   */
  async checkJobs() {
    const now = this.clock();
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
      await this.stopJob(unit, "encoding takeover: cancel");
      await this.failed(unit);
      if (unit.slot) await this.giveBack([unit.slot]);
    }
    await this.progress();
  }

  /** `units` are not needed any more: a running one's job is stopped and its slot given back; each goes. */
  async drop(units: readonly Unit[]) {
    for (const unit of units) {
      this.store.deleteUnit(unit.id);
      if (!unit.job || !unit.slot) continue;
      await this.stopJob(unit, "encoding: stop a stale job");
      await this.giveBack([unit.slot]);
    }
  }

  /** Stops `unit`'s job on its encoder, if it runs on one (a failure is logged as `what`: the job's silence ends it). */
  private async stopJob(unit: Unit, what: string) {
    if (!unit.slot || !unit.job) return;
    await encodingContext(this.env)
      .encoder.cancel(unit.slot, unit.job)
      .catch((error) => logError(what, error, { jobId: unit.job }));
  }

  async giveBack(slots: string[]) {
    if (slots.length === 0) return;
    for (const slot of slots) this.store.release(slot);
    await poolOf(this.env).release(this.store.video().videoId, slots);
  }

  /** Ready or errored: the row and its event, then every job and slot goes. */
  private async finish(change: Extract<Change, { status: "ready" | "errored" }>) {
    this.store.set("phase", change.status);
    if (change.status === "errored") {
      this.speech.stop({ failed: "The video could not be encoded, so its speech cannot be heard." });
      await this.speech.send();
    }
    const changed = await changeVideoRow(this.env, this.store.video().videoId, this.clock(), change);
    if (!changed) this.store.set("phase", "cancelled");
    if (change.status === "errored") {
      const { media } = encodingContext(this.env);
      const { projectId, videoId } = this.store.video();
      await media.delete(posterKey(projectId, videoId)).catch(() => {});
    }
    await this.stopEverything();
  }

  /**
   * Stops every running job, gives every slot back, answers every waiting viewer; once the video
   * is ready, its frames' units keep running (and their slots and viewers).
   */
  private async stopEverything() {
    const ready = this.store.phase() === "ready";
    const running = this.store.running(ready);
    await Promise.all(running.map((unit) => this.stopJob(unit, "encoding: cancel a job")));
    if (!ready) await this.files.abortAll();
    this.store.deleteUnits(ready);
    this.store.clearSegments();
    for (const key of this.waiters.keys()) {
      if (!(ready && isFrameWaited(key))) this.waiters.wake(key, ready ? "stored" : "gone");
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
