import type { SegmentRow } from "./coordinator-store";

/** An added audio track being made: its language, its generation (its PUT) and that PUT's file. */
export type AudioMaking = { language: string; generation: string; sourceKey: string };

/**
 * What a video's coordinator keeps of the added audio tracks it makes (docs/audio-tracks.md), in
 * its Durable Object's SQLite beside coordinator-store.ts's tables: `audio_making` (the tracks being
 * made, one generation per language) and `audio_segments` (their segments, reserved and stored).
 * A track's runs are units of the encoding's store.
 */
export class AudioStore {
  constructor(private readonly sql: SqlStorage) {
    sql.exec(`CREATE TABLE IF NOT EXISTS audio_making (
      language TEXT PRIMARY KEY, generation TEXT NOT NULL, source_key TEXT NOT NULL)`);
    sql.exec(`CREATE TABLE IF NOT EXISTS audio_segments (
      language TEXT NOT NULL, idx INTEGER NOT NULL, state TEXT NOT NULL, job TEXT, at INTEGER NOT NULL,
      PRIMARY KEY (language, idx))`);
  }

  /** Every track being made, by language. */
  tracks(): AudioMaking[] {
    return this.sql
      .exec<{ language: string; generation: string; source_key: string }>(
        "SELECT * FROM audio_making ORDER BY language",
      )
      .toArray()
      .map((row) => ({ language: row.language, generation: row.generation, sourceKey: row.source_key }));
  }

  track(language: string): AudioMaking | null {
    return this.tracks().find((track) => track.language === language) ?? null;
  }

  /** The track of `track.language` is made, from its generation (nothing of another is kept). */
  start(track: AudioMaking): void {
    this.forget(track.language);
    this.sql.exec(
      "INSERT INTO audio_making (language, generation, source_key) VALUES (?, ?, ?)",
      track.language,
      track.generation,
      track.sourceKey,
    );
  }

  /** The track of `language` is no longer made here: it and its segments' records go. */
  forget(language: string): void {
    this.sql.exec("DELETE FROM audio_making WHERE language = ?", language);
    this.sql.exec("DELETE FROM audio_segments WHERE language = ?", language);
  }

  segment(language: string, index: number): SegmentRow | null {
    return (
      this.sql
        .exec<SegmentRow>("SELECT state, job, at FROM audio_segments WHERE language = ? AND idx = ?", language, index)
        .toArray()[0] ?? null
    );
  }

  /** Segment `index` of `language` is reserved to job `jobId` from `at`. */
  reserve(language: string, index: number, jobId: string, at: number): void {
    this.sql.exec(
      "INSERT OR REPLACE INTO audio_segments (language, idx, state, job, at) VALUES (?, ?, 'storing', ?, ?)",
      language,
      index,
      jobId,
      at,
    );
  }

  /** The segment job `jobId` reserved is stored. */
  stored(language: string, index: number, jobId: string, at: number): void {
    this.sql.exec(
      "UPDATE audio_segments SET state = 'stored', at = ? WHERE language = ? AND idx = ? AND job = ?",
      at,
      language,
      index,
      jobId,
    );
  }

  /** Job `jobId` will not store the segment it reserved. */
  abandon(language: string, index: number, jobId: string): void {
    this.sql.exec(
      "DELETE FROM audio_segments WHERE language = ? AND idx = ? AND job = ? AND state = 'storing'",
      language,
      index,
      jobId,
    );
  }

  /** The indexes of the stored segments of `language`. */
  storedOf(language: string): Set<number> {
    return new Set(
      this.sql
        .exec<{ idx: number }>("SELECT idx FROM audio_segments WHERE language = ? AND state = 'stored'", language)
        .toArray()
        .map((row) => row.idx),
    );
  }
}
