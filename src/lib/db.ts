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
