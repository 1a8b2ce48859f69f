/**
 * Bytes kept in a Durable Object's SQLite storage, which caps a row at 2 MB: a table of
 * `(seq INTEGER PRIMARY KEY, bytes BLOB NOT NULL)` rows of at most `ROW_BYTES`, read back in order
 * as one array. A tus upload keeps its tail so, an import the part it had begun.
 */

const ROW_BYTES = 1024 * 1024;

/** The statement that makes such a table. */
export function bytesTable(table: string): string {
  return `CREATE TABLE IF NOT EXISTS ${table} (seq INTEGER PRIMARY KEY, bytes BLOB NOT NULL);`;
}

/** Appends `bytes` to `table`, after what it holds. */
export function appendBytes(sql: SqlStorage, table: string, bytes: Uint8Array): void {
  for (let at = 0; at < bytes.byteLength; at += ROW_BYTES) {
    sql.exec(
      `INSERT INTO ${table} (seq, bytes) VALUES ((SELECT coalesce(max(seq), 0) + 1 FROM ${table}), ?)`,
      bytes.slice(at, at + ROW_BYTES),
    );
  }
}

/** Everything `table` holds, in order. */
export function readBytes(sql: SqlStorage, table: string): Uint8Array {
  const rows = sql.exec<{ bytes: ArrayBuffer }>(`SELECT bytes FROM ${table} ORDER BY seq`).toArray();
  const bytes = new Uint8Array(rows.reduce((sum, row) => sum + row.bytes.byteLength, 0));
  let at = 0;
  for (const row of rows) {
    bytes.set(new Uint8Array(row.bytes), at);
    at += row.bytes.byteLength;
  }
  return bytes;
}
