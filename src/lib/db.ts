/**
 * What query functions need of D1: the binding itself, or a session of it (the D1 Sessions API),
 * through which a request's reads and writes go so that they see each other.
 */
export type Db = Pick<D1Database, "prepare" | "batch">;

/**
 * `id IN (${IN_JSON_LIST})` with the ids bound as one JSON array parameter: D1 allows at most 100
 * bound parameters per statement, and a list of any length is one parameter this way.
 */
export const IN_JSON_LIST = "SELECT value FROM json_each(?)";

/** A condition of a query: SQL with `?` placeholders, and the values they take, in order. */
export type Condition = { sql: string; params: unknown[] };

/**
 * The query of one newest-first keyset page of `table`: the rows matching every condition, after
 * `after` in `(created_at, id)` descending order, `limit + 1` of them (the extra one tells whether
 * a next page exists). Built from the conditions given, so each filter shape can be one seek on
 * an index that leads with its filters in the listing order.
 */
export function newestFirstPage(
  table: string,
  conditions: Condition[],
  after: { createdAt: string; id: string } | null,
  limit: number,
): Condition {
  const where = after
    ? [...conditions, { sql: "(created_at, id) < (?, ?)", params: [after.createdAt, after.id] }]
    : conditions;
  return {
    sql: `SELECT * FROM ${table} WHERE ${where.map((c) => c.sql).join(" AND ") || "1"} ORDER BY created_at DESC, id DESC LIMIT ?`,
    params: [...where.flatMap((c) => c.params), limit + 1],
  };
}
