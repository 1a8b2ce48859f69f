import { appendBytes, bytesTable, readBytes } from "../lib/sqlite-bytes";

/**
 * What a run leaves the next run of the same import, besides the parts it stored in R2 (which D1
 * records): the bytes of the part it had begun when its slice ended, so that an origin too slow to
 * fill a part within a slice still gets there, and whether the origin has shown it cannot resume.
 * The import's Durable Object keeps it (`sqliteResume`); tests keep it in memory.
 */
export type Resume = {
  /** The bytes of the part begun, the first of them at `start` in the file. */
  head: { start: number; bytes: Uint8Array } | null;
  /** An ask by Range was answered with the whole file: the origin ignores Range (or sends it compressed). */
  unresumable: boolean;
};

export type ResumeStore = { load(): Resume; save(resume: Resume): void };

export const NOTHING_KEPT: Resume = { head: null, unresumable: false };

/**
 * The resume state's tables in a Durable Object's SQLite storage: `import_resume` (one row: the
 * head's start, null for none, and whether the origin is unresumable) and `import_head` (its bytes).
 */
export const RESUME_SCHEMA =
  "CREATE TABLE IF NOT EXISTS import_resume (one INTEGER PRIMARY KEY CHECK (one = 1), start INTEGER, unresumable INTEGER NOT NULL);" +
  bytesTable("import_head");

/** The resume state in a Durable Object's storage, whose tables (`RESUME_SCHEMA`) its owner makes. */
export function sqliteResume(storage: DurableObjectStorage): ResumeStore {
  const { sql } = storage;
  return {
    load() {
      const row = sql
        .exec<{ start: number | null; unresumable: number }>("SELECT start, unresumable FROM import_resume")
        .toArray()[0];
      if (!row) return NOTHING_KEPT;
      const head = row.start === null ? null : { start: row.start, bytes: readBytes(sql, "import_head") };
      return { head, unresumable: row.unresumable === 1 };
    },
    save(resume) {
      storage.transactionSync(() => {
        sql.exec("DELETE FROM import_head");
        if (resume.head) appendBytes(sql, "import_head", resume.head.bytes);
        sql.exec(
          "INSERT OR REPLACE INTO import_resume (one, start, unresumable) VALUES (1, ?, ?)",
          resume.head?.start ?? null,
          resume.unresumable ? 1 : 0,
        );
      });
    },
  };
}
