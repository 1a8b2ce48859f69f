import { DurableObject } from "cloudflare:workers";
import { z } from "zod";

const ConsumeInput = z.strictObject({
  policy: z.string().min(1).max(64),
  limit: z.int().positive(),
  windowSeconds: z.int().positive(),
});
export type ConsumeInput = z.infer<typeof ConsumeInput>;

export type ConsumeResult = {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Seconds until the oldest counted request leaves the window and frees a slot. */
  resetSeconds: number;
};

/**
 * One instance per caller. A rolling-window log of accepted requests per policy, kept in the
 * object's SQLite storage. `consume` runs without awaiting, so concurrent calls are serialized by
 * the runtime and counting is exact.
 */
export class RateLimiter extends DurableObject<Env> {
  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    ctx.storage.sql.exec(
      "CREATE TABLE IF NOT EXISTS hits (policy TEXT NOT NULL, at INTEGER NOT NULL);" +
        "CREATE INDEX IF NOT EXISTS hits_policy_at ON hits (policy, at);",
    );
  }

  consume(input: ConsumeInput, now: number = Date.now()): ConsumeResult {
    const { policy, limit, windowSeconds } = ConsumeInput.parse(input);
    const windowMs = windowSeconds * 1000;
    const sql = this.ctx.storage.sql;
    sql.exec("DELETE FROM hits WHERE policy = ? AND at <= ?", policy, now - windowMs);
    const { count, oldest } = sql
      .exec<{ count: number; oldest: number | null }>(
        "SELECT count(*) AS count, min(at) AS oldest FROM hits WHERE policy = ?",
        policy,
      )
      .one();
    const resetSeconds = Math.max(1, Math.ceil(((oldest ?? now) + windowMs - now) / 1000));
    if (count >= limit) return { allowed: false, limit, remaining: 0, resetSeconds };
    sql.exec("INSERT INTO hits (policy, at) VALUES (?, ?)", policy, now);
    return { allowed: true, limit, remaining: limit - count - 1, resetSeconds };
  }
}
