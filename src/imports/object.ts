import { DurableObject } from "cloudflare:workers";
import { logError } from "../lib/log";
import { SECOND } from "../lib/time";
import { type ImportMessage, ImportMessageSchema, type TrackRef } from "../queues/imports";
import { importDeps } from "./deps";
import { IMPORT_LIMITS, type ImportLimits } from "./limits";
import { RESUME_SCHEMA, type ResumeStore, sqliteResume } from "./resume";
import { type RunOutcome, runImport } from "./run";
import { giveUp, targetOf } from "./targets";

const SCHEMA =
  "CREATE TABLE IF NOT EXISTS import_job (one INTEGER PRIMARY KEY CHECK (one = 1), project_id TEXT NOT NULL, video_id TEXT NOT NULL, errors INTEGER NOT NULL, language TEXT, generation TEXT);" +
  RESUME_SCHEMA;

/** What an import's object keeps of its message: the video, and the added audio track when it fetches one's file. */
type Job = { projectId: string; videoId: string; track?: TrackRef | undefined };

const noop = () => {};

/**
 * One import from a URL, where its runs happen (docs/imports.md, "Where the fetch runs"): the
 * imports queue's message only starts it, and each run is this object's alarm, so an import waits
 * for no other, whoever's it is. Locally Miniflare hands a queue's consumer one batch at a time, and
 * in production Queues adds consumers only as it sees fit; the alarms of different objects run at
 * once in both. A run that ends its slice sets the next alarm at once, a transient failure one
 * later; `stop` ends the run in flight at once (its video was deleted).
 *
 * Storage: table `import_job` (one row: the message, and the errors counted) and what a run leaves
 * the next one (resume.ts). One object per import (objects.ts): a video's source, or an added
 * audio track's file (docs/audio-tracks.md).
 */
export class VideoImport extends DurableObject<Env> {
  /** The numbers and the origin of its runs: tests set their own (the real ones otherwise). */
  limits: ImportLimits = IMPORT_LIMITS;
  origin: typeof fetch | undefined = undefined;
  readonly #resume: ResumeStore;
  /** The run in flight: how to stop it, and its end. */
  #running: { controller: AbortController; done: Promise<void> } | null = null;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    ctx.storage.sql.exec(SCHEMA);
    // An object made before imports fetched audio tracks' files: its job row gains their columns.
    const columns = ctx.storage.sql.exec<{ name: string }>("PRAGMA table_info(import_job)").toArray();
    if (!columns.some((column) => column.name === "generation")) {
      ctx.storage.sql.exec("ALTER TABLE import_job ADD COLUMN language TEXT");
      ctx.storage.sql.exec("ALTER TABLE import_job ADD COLUMN generation TEXT");
    }
    this.#resume = sqliteResume(ctx.storage);
  }

  /** Starts a run now, unless one runs or is due already. Any number of calls start one import. */
  async start(message: ImportMessage): Promise<void> {
    const { projectId, videoId, track } = ImportMessageSchema.parse(message);
    this.ctx.storage.sql.exec(
      "INSERT OR IGNORE INTO import_job (one, project_id, video_id, errors, language, generation) VALUES (1, ?, ?, 0, ?, ?)",
      projectId,
      videoId,
      track?.language ?? null,
      track?.generation ?? null,
    );
    if (this.#running || (await this.ctx.storage.getAlarm()) !== null) return;
    await this.ctx.storage.setAlarm(Date.now());
  }

  /** The video was deleted: the run in flight stops now (its connection closed), no other begins, and all is forgotten. */
  async stop(): Promise<void> {
    const running = this.#running;
    running?.controller.abort();
    await running?.done;
    await this.#forget();
  }

  override async alarm(): Promise<void> {
    const job = this.#job();
    if (!job || this.#running) return;
    const controller = new AbortController();
    const done = this.#run(job, controller.signal);
    this.#running = { controller, done: done.then(noop, noop) };
    try {
      await done;
    } finally {
      this.#running = null;
    }
  }

  async #run(job: Job, signal: AbortSignal): Promise<void> {
    const { videoId, track } = job;
    const deps = importDeps(this.env, {
      resume: this.#resume,
      signal,
      fetch: this.origin,
      limits: this.limits,
    });
    let outcome: RunOutcome;
    try {
      outcome = await runImport(deps, videoId, track);
    } catch (error) {
      logError("import: run", error, { videoId });
      if (signal.aborted) return;
      const errors = this.#countError();
      if (errors >= this.limits.maxErrors) {
        await giveUp(targetOf(deps, job));
        await this.#forget();
      } else {
        await this.ctx.storage.setAlarm(Date.now() + errors * this.limits.retrySeconds * SECOND);
      }
      return;
    }
    if (signal.aborted) return;
    this.ctx.storage.sql.exec("UPDATE import_job SET errors = 0");
    switch (outcome.kind) {
      case "continue":
        await this.ctx.storage.setAlarm(Date.now());
        return;
      case "retry":
        await this.ctx.storage.setAlarm(Date.now() + outcome.delaySeconds * SECOND);
        return;
      case "skipped":
        // Another run's lease (one that died: the sweep starts this object again once it runs out),
        // or the import is over: then nothing here is needed any more.
        if (!(await targetOf(deps, job).pending())) await this.#forget();
        return;
      default:
        await this.#forget();
    }
  }

  #job(): Job | null {
    const row = this.ctx.storage.sql
      .exec<{ project_id: string; video_id: string; language: string | null; generation: string | null }>(
        "SELECT project_id, video_id, language, generation FROM import_job",
      )
      .toArray()[0];
    if (!row) return null;
    const track = row.language && row.generation ? { language: row.language, generation: row.generation } : undefined;
    return { projectId: row.project_id, videoId: row.video_id, track };
  }

  #countError(): number {
    return (
      this.ctx.storage.sql
        .exec<{ errors: number }>("UPDATE import_job SET errors = errors + 1 RETURNING errors")
        .toArray()[0]?.errors ?? this.limits.maxErrors
    );
  }

  /** Drops everything this import kept (its tables stay, empty, for a start that may still come). */
  async #forget(): Promise<void> {
    await this.ctx.storage.deleteAlarm();
    await this.ctx.storage.deleteAll();
    this.ctx.storage.sql.exec(SCHEMA);
  }
}
