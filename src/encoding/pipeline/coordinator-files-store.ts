import type { MadePart } from "../../../media-plan/files.mjs";
import { parseFragments } from "../../../media-plan/protocol.mjs";

/**
 * What a video's coordinator keeps of the parts of its files (the MP4, the M4A: coordinator-files.ts),
 * in its Durable Object's SQLite beside coordinator-store.ts's tables: `file_parts`, each part made
 * so far, its span of segments, its fragments, the file's origin and the part's ETag.
 */
export class FilePartsStore {
  constructor(private readonly sql: SqlStorage) {
    sql.exec(`CREATE TABLE IF NOT EXISTS file_parts (
      file TEXT NOT NULL, part INTEGER NOT NULL, first INTEGER NOT NULL, next INTEGER NOT NULL,
      fragments TEXT NOT NULL, origin INTEGER NOT NULL, etag TEXT, PRIMARY KEY (file, part))`);
  }

  /** The parts of `file` made so far, in order. */
  parts(file: string): MadePart[] {
    return this.sql
      .exec<{ part: number; first: number; next: number; fragments: string; origin: number; etag: string | null }>(
        "SELECT part, first, next, fragments, origin, etag FROM file_parts WHERE file = ? ORDER BY part",
        file,
      )
      .toArray()
      .map((row) => ({
        part: row.part,
        from: row.first,
        to: row.next,
        fragments: parseFragments(JSON.parse(row.fragments)),
        origin: row.origin,
        etag: row.etag,
      }));
  }

  /** A part of `file` is made (again: a part made twice keeps the last). */
  keep(file: string, row: MadePart): void {
    this.sql.exec(
      "INSERT OR REPLACE INTO file_parts (file, part, first, next, fragments, origin, etag) VALUES (?, ?, ?, ?, ?, ?, ?)",
      file,
      row.part,
      row.from,
      row.to,
      JSON.stringify(row.fragments),
      row.origin,
      row.etag,
    );
  }

  /** `file`'s parts are forgotten (its upload went). */
  forget(file: string): void {
    this.sql.exec("DELETE FROM file_parts WHERE file = ?", file);
  }
}
