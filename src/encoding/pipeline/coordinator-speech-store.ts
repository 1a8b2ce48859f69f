import type { Word } from "../../../media-plan/protocol.mjs";

/**
 * A generated caption track being heard: its language (BCP 47, the track's), its generation (the
 * track's, so what an older one heard is let go), how the engine hears it (`heardAs`, its code)
 * and where (`recognizer`: the encoder's engine, or the Worker's), and its chunks once the plan
 * says how many (null before).
 */
export type SpeechRequest = {
  language: string;
  generation: string;
  heardAs: string;
  recognizer: "encoder" | "worker";
  chunks: number | null;
};

/**
 * What a video's coordinator keeps of the speech of its generated caption tracks, in its Durable
 * Object's SQLite beside coordinator-store.ts's tables: `speech` (the tracks being heard), `heard`
 * (their chunks' words so far) and `messages` (what is to be told to the captions' queue, kept
 * until it is sent). A track's speech units are units of the encoding's store.
 */
export class SpeechStore {
  constructor(private readonly sql: SqlStorage) {
    sql.exec(`CREATE TABLE IF NOT EXISTS speech (
      language TEXT PRIMARY KEY, generation TEXT NOT NULL, heard_as TEXT NOT NULL, recognizer TEXT NOT NULL,
      chunks INTEGER)`);
    sql.exec(`CREATE TABLE IF NOT EXISTS heard (
      language TEXT NOT NULL, chunk INTEGER NOT NULL, words TEXT NOT NULL, PRIMARY KEY (language, chunk))`);
    sql.exec("CREATE TABLE IF NOT EXISTS messages (id TEXT PRIMARY KEY, body TEXT NOT NULL)");
  }

  speechRequests(): SpeechRequest[] {
    return this.sql
      .exec<{ language: string; generation: string; heard_as: string; recognizer: string; chunks: number | null }>(
        "SELECT * FROM speech ORDER BY language",
      )
      .toArray()
      .map((row) => ({
        language: row.language,
        generation: row.generation,
        heardAs: row.heard_as,
        recognizer: row.recognizer === "worker" ? "worker" : "encoder",
        chunks: row.chunks,
      }));
  }

  speechRequest(language: string): SpeechRequest | null {
    return this.speechRequests().find((request) => request.language === language) ?? null;
  }

  /** The track of `request.language` is to be heard (again; what an older generation heard went first). */
  requestSpeech(request: SpeechRequest): void {
    this.sql.exec(
      "INSERT OR REPLACE INTO speech (language, generation, heard_as, recognizer, chunks) VALUES (?, ?, ?, ?, ?)",
      request.language,
      request.generation,
      request.heardAs,
      request.recognizer,
      request.chunks,
    );
  }

  /** The plan says how many chunks the track of `language` has. */
  setSpeechChunks(language: string, chunks: number): void {
    this.sql.exec("UPDATE speech SET chunks = ? WHERE language = ?", chunks, language);
  }

  /** The track of `language` is no longer heard here: its request and its words go. */
  dropSpeech(language: string): void {
    this.sql.exec("DELETE FROM speech WHERE language = ?", language);
    this.sql.exec("DELETE FROM heard WHERE language = ?", language);
  }

  /** The words of chunk `chunk` of `language` were heard. */
  keepWords(language: string, chunk: number, words: Word[]): void {
    this.sql.exec(
      "INSERT OR REPLACE INTO heard (language, chunk, words) VALUES (?, ?, ?)",
      language,
      chunk,
      JSON.stringify(words),
    );
  }

  /** How many chunks of `language` are heard. */
  heardCount(language: string): number {
    return this.sql.exec<{ n: number }>("SELECT COUNT(*) AS n FROM heard WHERE language = ?", language).one().n;
  }

  /** Every word heard of `language`, in order. */
  heardWords(language: string): Word[] {
    return this.sql
      .exec<{ words: string }>("SELECT words FROM heard WHERE language = ? ORDER BY chunk", language)
      .toArray()
      .flatMap((row) => JSON.parse(row.words) as Word[]);
  }

  // ─── messages to send ─────────────────────────────────────────────────────────────────────

  /** A message to send, kept until it is sent (`sent`). */
  keepMessage(id: string, body: unknown): void {
    this.sql.exec("INSERT OR REPLACE INTO messages (id, body) VALUES (?, ?)", id, JSON.stringify(body));
  }

  messages(): { id: string; body: unknown }[] {
    return this.sql
      .exec<{ id: string; body: string }>("SELECT id, body FROM messages ORDER BY id")
      .toArray()
      .map((row) => ({ id: row.id, body: JSON.parse(row.body) as unknown }));
  }

  sent(id: string): void {
    this.sql.exec("DELETE FROM messages WHERE id = ?", id);
  }
}
