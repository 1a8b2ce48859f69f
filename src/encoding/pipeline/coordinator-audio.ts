import { type Plan, segmentCount } from "../../../media-plan/plan.mjs";
import { segmentName } from "../../../media-plan/protocol.mjs";
import { dropGeneration } from "../../audio-tracks/making";
import { type AudioTrackOutcome, audioTrackOf, finishAudioTrack } from "../../audio-tracks/queries";
import { logError } from "../../lib/log";
import { audioTrackSegmentKey } from "../../lib/storage-keys";
import { encodingContext } from "./context";
import { type AudioMaking, AudioStore } from "./coordinator-audio-store";
import { MAX_TRIES, missingSpans, reservationVerdict } from "./coordinator-rules";
import type { AudioUnit, EncodingStore, NewUnit, Unit } from "./coordinator-store";

/**
 * The making of added audio tracks (docs/audio-tracks.md), for a video's coordinator: a track put
 * (the encodings queue's `audio` message) is made in runs of AUDIO_RUN_SEGMENTS segments, background
 * units of the fair pool, each job reading the track's own file; every segment is stored once,
 * under the track's generation; when all are, the track is `ready`. Its file not being audio fails
 * it at once (`invalid_source`); a run failing MAX_TRIES times fails it (`encoding_failed`), never
 * the video. A track put again or deleted is let go: its jobs stop, and the objects of a generation
 * no track names any more go.
 */

/**
 * Segments one audio job makes at most: a minute of audio, a second or a few of an encoder's work
 * (1.3 s median with Debian's ffmpeg, 3.4 s with the npm one: docs/audio-tracks.md), so a track
 * never holds a background slot long, and a 10-minute track takes ten jobs.
 */
export const AUDIO_RUN_SEGMENTS = 15;

/** Where audio units run among a video's own: after its segments, its storyboard and its speech. */
const AUDIO_RANK = 2e12;

/**
 * The runs the track of `language` still needs: every segment neither `stored` nor `covered` by
 * one of its units, in runs of at most AUDIO_RUN_SEGMENTS, each a background unit.
 */
export function audioRuns(
  plan: Plan,
  language: string,
  covered: ReadonlySet<number>,
  stored: ReadonlySet<number>,
): NewUnit[] {
  const missing = (i: number) => !covered.has(i) && !stored.has(i);
  return missingSpans(segmentCount(plan), missing, AUDIO_RUN_SEGMENTS).map(({ from, to }) => ({
    id: `audio-${language}-${from}`,
    kind: "audio" as const,
    priority: "background" as const,
    language,
    from,
    to,
    rank: AUDIO_RANK + from,
  }));
}

/** Where a failed audio unit starts again: its first segment not stored (`to` when all are). */
export function firstUnstored(unit: Pick<AudioUnit, "from" | "to">, stored: ReadonlySet<number>): number {
  let from = unit.from;
  while (from < unit.to && stored.has(from)) from += 1;
  return from;
}

export class AudioWork {
  private readonly kept: AudioStore;

  constructor(
    private readonly env: Env,
    private readonly store: EncodingStore,
    sql: SqlStorage,
    private readonly clock: () => number,
  ) {
    this.kept = new AudioStore(sql);
  }

  /** The track of `language` being made, or null. */
  making(language: string): AudioMaking | null {
    return this.kept.track(language);
  }

  /**
   * The track of `language` changed (put or deleted): what its row names now is made; a generation
   * it no longer names is let go, its objects with it.
   */
  async changed(language: string): Promise<void> {
    const row = await audioTrackOf(this.env.DB, this.store.video().videoId, language);
    const held = this.kept.track(language);
    // A track put by URL is made once its file is fetched (the import asks again then).
    const wanted = row?.status === "processing" && row.import_url === null ? row : null;
    if (held && held.generation !== wanted?.generation) {
      await this.letGo(held, row?.generation === held.generation ? "keep" : "drop");
    }
    if (wanted && !this.kept.track(language)) {
      this.kept.start({ language, generation: wanted.generation, sourceKey: wanted.source_key });
    }
    this.repair(language);
  }

  /** Every segment of the track of `language` that is neither stored nor being made gets a run. */
  repair(language: string): void {
    const plan = this.store.plan();
    if (!plan || !this.kept.track(language)) return;
    const covered = new Set<number>();
    for (const unit of this.store.audioUnits(language)) for (let i = unit.from; i < unit.to; i++) covered.add(i);
    for (const unit of audioRuns(plan, language, covered, this.kept.storedOf(language))) this.store.addUnit(unit);
  }

  /**
   * Whether job `jobId` (of `unit`) may store segment `index` of its track: `store` it under `key`,
   * `skip` it (stored already, or another job is storing it), or `void` (the job is, or the segment
   * is not its own).
   */
  reserve(unit: Unit | null, jobId: string, index: number): { verdict: "store" | "skip" | "void"; key: string } {
    const track = unit?.kind === "audio" ? this.kept.track(unit.language) : null;
    if (unit?.kind !== "audio" || !track || index < unit.from || index >= unit.to) return { verdict: "void", key: "" };
    const now = this.clock();
    const verdict = reservationVerdict(this.kept.segment(track.language, index), jobId, now);
    if (verdict === "store") this.kept.reserve(track.language, index, jobId, now);
    const { projectId, videoId } = this.store.video();
    return { verdict, key: audioTrackSegmentKey(projectId, videoId, track.generation, segmentName(index)) };
  }

  /** The segment job `jobId` reserved is stored; `void` when its track is no longer made (it must go). */
  stored(unit: Unit | null, jobId: string, index: number): "ok" | "void" {
    if (unit?.kind !== "audio" || !this.kept.track(unit.language)) return "void";
    this.kept.stored(unit.language, index, jobId, this.clock());
    return "ok";
  }

  /** Storing the reserved segment failed: another job may store it. */
  abandoned(unit: Unit | null, jobId: string, index: number): void {
    if (unit?.kind === "audio") this.kept.abandon(unit.language, index, jobId);
  }

  /** The source of job `unit`'s track: the file its PUT stored; null when it is no longer made. */
  sourceOf(unit: AudioUnit): string | null {
    return this.kept.track(unit.language)?.sourceKey ?? null;
  }

  /** A run of the track of `language` ended: what is missing runs again; a whole track is ready. */
  async ran(language: string): Promise<void> {
    const plan = this.store.plan();
    if (!plan || !this.kept.track(language)) return;
    this.repair(language);
    if (this.kept.storedOf(language).size >= segmentCount(plan)) await this.finish(language, { status: "ready" });
  }

  /** The track's file is not audio (its job said so): it errors at once, with the job's words. */
  invalid(language: string, message: string): Promise<void> {
    return this.finish(language, { status: "errored", code: "invalid_source", message });
  }

  /**
   * A run failed or went silent (`tries` counted so far): it runs again from its first segment not
   * stored, or, after MAX_TRIES, the track errors.
   */
  async failed(unit: AudioUnit, tries: number): Promise<void> {
    if (tries >= MAX_TRIES) {
      const message = `The audio track could not be made: ${MAX_TRIES} attempts failed.`;
      await this.finish(unit.language, { status: "errored", code: "encoding_failed", message });
      return;
    }
    const from = firstUnstored(unit, this.kept.storedOf(unit.language));
    if (from >= unit.to) {
      this.store.deleteUnit(unit.id);
      await this.ran(unit.language);
      return;
    }
    this.store.requeueFrom(unit, from, tries);
  }

  /** The video was deleted: nothing is made any more (its objects go with the video's). */
  stop(): void {
    for (const track of this.kept.tracks()) this.kept.forget(track.language);
  }

  /**
   * The track of `language` ends (`outcome`): its other jobs stop, and its row says so, if it still
   * names this generation; else nothing names its objects, and they go.
   */
  private async finish(language: string, outcome: AudioTrackOutcome): Promise<void> {
    const track = this.kept.track(language);
    if (!track) return;
    await this.stopJobs(language);
    this.store.deleteAudioUnits(language);
    this.kept.forget(language);
    const { videoId } = this.store.video();
    const named = await finishAudioTrack(
      this.env.DB,
      { videoId, language, generation: track.generation },
      outcome,
      this.clock(),
    );
    if (!named) await this.drop(track);
  }

  /** A generation is no longer made: its jobs stop, its units and records go, and its objects unless `keep`. */
  private async letGo(track: AudioMaking, objects: "keep" | "drop"): Promise<void> {
    await this.stopJobs(track.language);
    this.store.deleteAudioUnits(track.language);
    this.kept.forget(track.language);
    if (objects === "drop") await this.drop(track);
  }

  private async stopJobs(language: string): Promise<void> {
    const { encoder } = encodingContext(this.env);
    const running = this.store.audioUnits(language).filter((unit) => unit.job && unit.slot);
    await Promise.all(
      running.map((unit) =>
        encoder
          .cancel(unit.slot as string, unit.job as string)
          .catch((error) => logError("audio tracks: cancel a job", error, { jobId: unit.job })),
      ),
    );
  }

  private async drop(track: AudioMaking): Promise<void> {
    const { projectId, videoId } = this.store.video();
    await dropGeneration(this.env.MEDIA, projectId, videoId, track.generation).catch((error) =>
      logError("audio tracks: delete a generation's objects", error, { videoId, generation: track.generation }),
    );
  }
}
