import type { Plan } from "../../../media-plan/plan.mjs";
import { type Priority, parsePlan } from "../../../media-plan/protocol.mjs";

/** Where a video's encoding stands. */
export type Phase = "idle" | "waiting" | "encoding" | "ready" | "errored" | "cancelled";
export type Video = { projectId: string; videoId: string };

export type Kind =
  | "probe"
  | "still"
  | "segments"
  | "mp4"
  | "m4a"
  | "frame"
  | "tiles"
  | "storyboard"
  | "speech"
  | "audio";

/**
 * The kinds of work that go on once the video is ready (its encoding is over): a viewer's frames,
 * the hearing of speech for generated captions, and the making of added audio tracks.
 */
const AFTER_READY: readonly Kind[] = ["frame", "speech", "audio"];
const AFTER_READY_SQL = AFTER_READY.map((kind) => `'${kind}'`).join(", ");

/** What a unit makes. */
export type Work =
  /** Segments `from` to `to` (exclusive) of one rendition (a viewer's), or of every rendition still missing there (null). */
  | { kind: "segments"; rendition: string | null; from: number; to: number }
  /** Output frame `frame` (pictures.mjs) at `width` pixels. */
  | { kind: "frame"; frame: number; width: number }
  /** Storyboard tiles `from` to `to` (exclusive), by cue (pictures.mjs). */
  | { kind: "tiles"; from: number; to: number }
  /** The words of chunk `chunk` (coordinator-rules.ts, `speechSpan`) of the track of `language`. */
  | { kind: "speech"; language: string; chunk: number }
  /** Segments `from` to `to` (exclusive) of the added audio track of `language` (coordinator-audio.ts). */
  | { kind: "audio"; language: string; from: number; to: number }
  | { kind: Exclude<Kind, "segments" | "frame" | "tiles" | "speech" | "audio"> };

/** Where a unit stands: queued (no job) or running as `job` on `slot`. */
type UnitState = {
  id: string;
  priority: Priority;
  rank: number;
  tries: number;
  job: string | null;
  slot: string | null;
  started: number | null;
  heard: number | null;
};

/** A unit of a video's encoding: one encoder job when it runs. */
export type Unit = UnitState & Work;
export type SegmentsUnit = Extract<Unit, { kind: "segments" }>;
export type TilesUnit = Extract<Unit, { kind: "tiles" }>;
export type AudioUnit = Extract<Unit, { kind: "audio" }>;

export type NewUnit = Pick<UnitState, "id" | "priority" | "rank"> & Work;

/**
 * A unit as its table holds it: `first` and `last` are a segments, tiles or audio unit's span, a
 * frame unit's frame and width, a speech unit's chunk; `language` is a speech or audio unit's track.
 */
type UnitRow = UnitState & {
  kind: Kind;
  rendition: string | null;
  first: number;
  last: number;
  language: string | null;
};

function unitOf({ kind, rendition, first, last, language, ...state }: UnitRow): Unit {
  if (kind === "segments") return { ...state, kind, rendition, from: first, to: last };
  if (kind === "tiles") return { ...state, kind, from: first, to: last };
  if (kind === "frame") return { ...state, kind, frame: first, width: last };
  if (kind === "speech") return { ...state, kind, language: language ?? "", chunk: first };
  if (kind === "audio") return { ...state, kind, language: language ?? "", from: first, to: last };
  return { ...state, kind };
}

function isSegments(unit: Unit): unit is SegmentsUnit {
  return unit.kind === "segments";
}

function isAudio(unit: Unit): unit is AudioUnit {
  return unit.kind === "audio";
}

function columnsOf(work: Work): { rendition: string | null; first: number; last: number; language: string | null } {
  if (work.kind === "segments") return { rendition: work.rendition, first: work.from, last: work.to, language: null };
  if (work.kind === "tiles") return { rendition: null, first: work.from, last: work.to, language: null };
  if (work.kind === "frame") return { rendition: null, first: work.frame, last: work.width, language: null };
  if (work.kind === "speech")
    return { rendition: null, first: work.chunk, last: work.chunk + 1, language: work.language };
  if (work.kind === "audio") return { rendition: null, first: work.from, last: work.to, language: work.language };
  return { rendition: null, first: 0, last: 0, language: null };
}

/** A segment a job has reserved (`storing`) or stored. */
export type SegmentRow = { state: "storing" | "stored"; job: string | null; at: number };

/**
 * What a video's coordinator (coordinator.ts) keeps, in its Durable Object's SQLite: the one module
 * of its statements. Tables: `meta` (key → JSON: the video, its phase, plan, settings, the MP4's
 * and the M4A's uploads, what is stored of the poster and storyboard, each background kind's pace),
 * `units` (the work, queued or running), `segments` (reserved and stored), `frames` (stored: a
 * viewer's and the storyboard's tiles), `slots` (held from the pool); the speech of generated
 * caption tracks has its own tables (coordinator-speech-store.ts), and so do added audio tracks
 * (coordinator-audio-store.ts) and the MP4's and the M4A's parts (coordinator-files-store.ts).
 */
export class EncodingStore {
  constructor(private readonly sql: SqlStorage) {
    sql.exec("CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)");
    sql.exec(`CREATE TABLE IF NOT EXISTS segments (
      rendition TEXT NOT NULL, idx INTEGER NOT NULL, state TEXT NOT NULL, job TEXT, at INTEGER NOT NULL,
      PRIMARY KEY (rendition, idx))`);
    sql.exec(`CREATE TABLE IF NOT EXISTS units (
      id TEXT PRIMARY KEY, kind TEXT NOT NULL, priority TEXT NOT NULL, rendition TEXT, first INTEGER NOT NULL,
      last INTEGER NOT NULL, rank REAL NOT NULL, tries INTEGER NOT NULL DEFAULT 0, job TEXT, slot TEXT,
      started INTEGER, heard INTEGER)`);
    sql.exec("CREATE TABLE IF NOT EXISTS slots (slot TEXT PRIMARY KEY, kind TEXT NOT NULL)");
    sql.exec(
      "CREATE TABLE IF NOT EXISTS frames (frame INTEGER NOT NULL, width INTEGER NOT NULL, PRIMARY KEY (frame, width))",
    );
    // Speech units name their track; a table made before them gets the column.
    const columns = sql.exec<{ name: string }>("PRAGMA table_info(units)").toArray();
    if (!columns.some((column) => column.name === "language")) sql.exec("ALTER TABLE units ADD COLUMN language TEXT");
  }

  // ─── the video's state ───

  phase(): Phase {
    return this.get<Phase>("phase") ?? "idle";
  }

  video(): Video {
    const video = this.get<Video>("video");
    if (!video) throw new Error("the coordinator has no video");
    return video;
  }

  /** The stored plan, read through the protocol's parser; null before the probe. */
  plan(): Plan | null {
    const stored = this.get<unknown>("plan");
    return stored === null ? null : parsePlan(stored);
  }

  /** The video is being encoded. */
  active(): boolean {
    const phase = this.phase();
    return phase === "waiting" || phase === "encoding";
  }

  /** Jobs may run: the video is being encoded, or it is ready and frames are made for viewers. */
  serving(): boolean {
    return this.active() || this.phase() === "ready";
  }

  // ─── meta ─────────────────────────────────────────────────────────────────────────────────

  get<T>(key: string): T | null {
    const row = this.sql.exec<{ value: string }>("SELECT value FROM meta WHERE key = ?", key).toArray()[0];
    return row ? (JSON.parse(row.value) as T) : null;
  }

  set(key: string, value: unknown): void {
    this.sql.exec("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", key, JSON.stringify(value));
  }

  forget(key: string): void {
    this.sql.exec("DELETE FROM meta WHERE key = ?", key);
  }

  // ─── units ────────────────────────────────────────────────────────────────────────────────

  #units(where: string, ...params: unknown[]): Unit[] {
    return this.sql
      .exec<UnitRow>(`SELECT * FROM units WHERE ${where} ORDER BY rank, id`, ...params)
      .toArray()
      .map(unitOf);
  }

  /** Every unit, in the order they run. */
  units(): Unit[] {
    return this.#units("1");
  }

  unitOfJob(jobId: string): Unit | null {
    return this.#units("job = ?", jobId)[0] ?? null;
  }

  /** The units of `priority` waiting for a slot, in the order they run. */
  queued(priority: Priority): Unit[] {
    return this.#units("priority = ? AND job IS NULL", priority);
  }

  /** The segments units of `rendition` (a viewer's) that cover segment `index`. */
  covering(rendition: string, index: number): SegmentsUnit[] {
    const units = this.#units(
      "kind = 'segments' AND rendition = ? AND first <= ? AND last > ?",
      rendition,
      index,
      index,
    );
    return units.filter(isSegments);
  }

  /** The background runs (segments units of every rendition). */
  backgroundRuns(): SegmentsUnit[] {
    return this.#units("kind = 'segments' AND rendition IS NULL").filter(isSegments);
  }

  /** Segments units, queued or running. */
  segmentUnits(): Unit[] {
    return this.#units("kind = 'segments'");
  }

  /** Running units not heard from since `before`. */
  quietSince(before: number): Unit[] {
    return this.#units("job IS NOT NULL AND heard < ?", before);
  }

  /** Running units with their slot; without those that go on once the video is ready when `ready`. */
  running(ready: boolean): Unit[] {
    return this.#units(`job IS NOT NULL AND slot IS NOT NULL${ready ? ` AND kind NOT IN (${AFTER_READY_SQL})` : ""}`);
  }

  /** The speech units of `language`, queued or running. */
  speechUnits(language: string): Unit[] {
    return this.#units("kind = 'speech' AND language = ?", language);
  }

  deleteSpeechUnits(language: string): void {
    this.sql.exec("DELETE FROM units WHERE kind = 'speech' AND language = ?", language);
  }

  /** The units of the added audio track of `language`, queued or running. */
  audioUnits(language: string): AudioUnit[] {
    return this.#units("kind = 'audio' AND language = ?", language).filter(isAudio);
  }

  deleteAudioUnits(language: string): void {
    this.sql.exec("DELETE FROM units WHERE kind = 'audio' AND language = ?", language);
  }

  /** Adds a unit, unless one of its id is there. */
  addUnit(unit: NewUnit): void {
    const { rendition, first, last, language } = columnsOf(unit);
    this.sql.exec(
      "INSERT OR IGNORE INTO units (id, kind, priority, rendition, first, last, rank, language) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
      unit.id,
      unit.kind,
      unit.priority,
      rendition,
      first,
      last,
      unit.rank,
      language,
    );
  }

  deleteUnit(id: string): void {
    this.sql.exec("DELETE FROM units WHERE id = ?", id);
  }

  /** Whether a unit of this id is queued or running. */
  hasUnit(id: string): boolean {
    return this.sql.exec("SELECT 1 FROM units WHERE id = ?", id).toArray().length > 0;
  }

  /** The unit goes if it has not started. */
  dropQueuedUnit(id: string): void {
    this.sql.exec("DELETE FROM units WHERE id = ? AND job IS NULL", id);
  }

  /** Every unit goes; but those that go on once the video is ready when `ready`. */
  deleteUnits(ready: boolean): void {
    this.sql.exec(`DELETE FROM units${ready ? ` WHERE kind NOT IN (${AFTER_READY_SQL})` : ""}`);
  }

  /** The unit runs as job `jobId` on `slot`, from `at`. */
  started(id: string, jobId: string, slot: string, at: number): void {
    this.sql.exec("UPDATE units SET job = ?, slot = ?, started = ?, heard = ? WHERE id = ?", jobId, slot, at, at, id);
  }

  /** The unit's job was heard from at `at`. */
  heard(id: string, at: number): void {
    this.sql.exec("UPDATE units SET heard = ? WHERE id = ?", at, id);
  }

  /** A unit not of segments (those: `requeueFrom`) waits for a slot again, with `tries` counted. */
  requeue(id: string, tries: number): void {
    this.sql.exec(
      "UPDATE units SET tries = ?, job = NULL, slot = NULL, started = NULL, heard = NULL WHERE id = ?",
      tries,
      id,
    );
  }

  /** The segments (or audio) unit waits for a slot again from segment `from`, with `tries` counted. */
  requeueFrom(unit: SegmentsUnit | AudioUnit, from: number, tries: number): void {
    this.sql.exec("UPDATE units SET first = ? WHERE id = ?", from, unit.id);
    this.requeue(unit.id, tries);
  }

  /** The unit's job never started: it waits for a slot again, with nothing counted. */
  unstarted(id: string): void {
    this.sql.exec("UPDATE units SET job = NULL, slot = NULL, started = NULL, heard = NULL WHERE id = ?", id);
  }

  /**
   * The queued unit of a span (segments or tiles) ends at `at`; the rest of its span is a unit of
   * its own, `rest` (its id), queued just after it.
   */
  splitUnit(unit: SegmentsUnit | TilesUnit, at: number, rest: string): void {
    this.sql.exec("UPDATE units SET last = ? WHERE id = ?", at, unit.id);
    const { id: _id, rank, ...work } = unit;
    this.addUnit({ ...work, id: rest, from: at, rank: rank + 1e-6 * (at - unit.from) });
  }

  /** The queued background runs that end past segment `index` and start by `upTo` run at `rank`. */
  rankRuns(rank: number, index: number, upTo: number): void {
    this.sql.exec(
      "UPDATE units SET rank = ? WHERE kind = 'segments' AND rendition IS NULL AND job IS NULL AND last > ? AND first <= ?",
      rank,
      index,
      upTo,
    );
  }

  // ─── segments and frames ──────────────────────────────────────────────────────────────────

  segment(rendition: string, index: number): SegmentRow | null {
    return (
      this.sql
        .exec<SegmentRow>("SELECT state, job, at FROM segments WHERE rendition = ? AND idx = ?", rendition, index)
        .toArray()[0] ?? null
    );
  }

  /** Segment `index` of `rendition` is reserved to job `jobId` from `at`. */
  reserve(rendition: string, index: number, jobId: string, at: number): void {
    this.sql.exec(
      "INSERT OR REPLACE INTO segments (rendition, idx, state, job, at) VALUES (?, ?, 'storing', ?, ?)",
      rendition,
      index,
      jobId,
      at,
    );
  }

  /** The segment job `jobId` reserved is stored. */
  stored(rendition: string, index: number, jobId: string, at: number): void {
    this.sql.exec(
      "UPDATE segments SET state = 'stored', at = ? WHERE rendition = ? AND idx = ? AND job = ?",
      at,
      rendition,
      index,
      jobId,
    );
  }

  /** Job `jobId` will not store the segment it reserved. */
  abandon(rendition: string, index: number, jobId: string): void {
    this.sql.exec(
      "DELETE FROM segments WHERE rendition = ? AND idx = ? AND job = ? AND state = 'storing'",
      rendition,
      index,
      jobId,
    );
  }

  isStored(rendition: string, index: number): boolean {
    return this.segment(rendition, index)?.state === "stored";
  }

  /** The indexes of `rendition`'s stored segments. */
  storedOf(rendition: string): Set<number> {
    return new Set(
      this.sql
        .exec<{ idx: number }>("SELECT idx FROM segments WHERE rendition = ? AND state = 'stored'", rendition)
        .toArray()
        .map((row) => row.idx),
    );
  }

  /** How many segments are stored, of every rendition. */
  storedCount(): number {
    return this.sql.exec<{ n: number }>("SELECT COUNT(*) AS n FROM segments WHERE state = 'stored'").one().n;
  }

  /** How many segments of `rendition` from `from` to `to` (exclusive) are stored. */
  storedIn(rendition: string, from: number, to: number): number {
    return this.sql
      .exec<{ n: number }>(
        "SELECT COUNT(*) AS n FROM segments WHERE rendition = ? AND idx >= ? AND idx < ? AND state = 'stored'",
        rendition,
        from,
        to,
      )
      .one().n;
  }

  clearSegments(): void {
    this.sql.exec("DELETE FROM segments");
  }

  isFrameStored(frame: number, width: number): boolean {
    return this.sql.exec("SELECT 1 FROM frames WHERE frame = ? AND width = ?", frame, width).toArray().length > 0;
  }

  frameStored(frame: number, width: number): void {
    this.sql.exec("INSERT OR IGNORE INTO frames (frame, width) VALUES (?, ?)", frame, width);
  }

  /** The tiles units (storyboard tiles being made or to make). */
  tileUnits(): TilesUnit[] {
    return this.#units("kind = 'tiles'").filter((unit): unit is TilesUnit => unit.kind === "tiles");
  }

  // ─── slots ────────────────────────────────────────────────────────────────────────────────

  hold(slot: string, kind: Priority): void {
    this.sql.exec("INSERT OR REPLACE INTO slots (slot, kind) VALUES (?, ?)", slot, kind);
  }

  release(slot: string): void {
    this.sql.exec("DELETE FROM slots WHERE slot = ?", slot);
  }

  releaseAll(): void {
    this.sql.exec("DELETE FROM slots");
  }

  slots(): { slot: string; kind: Priority }[] {
    return this.sql.exec<{ slot: string; kind: Priority }>("SELECT slot, kind FROM slots ORDER BY slot").toArray();
  }

  /** The slots held that no unit runs on (of `kind`, or of both). */
  idleSlots(kind?: Priority): string[] {
    return this.sql
      .exec<{ slot: string }>(
        `SELECT slot FROM slots WHERE ${kind ? "kind = ? AND " : ""}slot NOT IN (SELECT slot FROM units WHERE slot IS NOT NULL)`,
        ...(kind ? [kind] : []),
      )
      .toArray()
      .map((r) => r.slot);
  }
}
