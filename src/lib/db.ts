/**
 * What query functions need of D1: the binding itself, or a session of it (the D1 Sessions API),
 * through which a request's reads and writes go so that they see each other.
 */
export type Db = Pick<D1Database, "prepare" | "batch">;
