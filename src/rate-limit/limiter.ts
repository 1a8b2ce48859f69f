import { DurableObject } from "cloudflare:workers";
import { z } from "zod";
import { VIEW_STARTS } from "./policies";
import { ViewStarts } from "./view-starts";

const Bucket = z.strictObject({ subject: z.string().min(1).max(200), limit: z.int().positive() });

const ConsumeInput = z.strictObject({
  policy: z.string().min(1).max(64),
  windowSeconds: z.int().positive().max(86_400),
  /** Every bucket the request counts against; it passes only if each has room. */
  buckets: z.array(Bucket).min(1).max(4),
});
export type ConsumeInput = z.infer<typeof ConsumeInput>;

/** A viewing beacon's count (`consumeBeacon`): its buckets, and the view it is of. */
const BeaconInput = ConsumeInput.extend({
  view: z.strictObject({ videoId: z.string().min(1).max(64), viewId: z.string().min(1).max(64) }),
});
export type BeaconInput = z.infer<typeof BeaconInput>;

const ReleaseInput = z.strictObject({ policy: z.string().min(1).max(64), subject: z.string().min(1).max(200) });

export type ConsumeResult = {
  allowed: boolean;
  /** Which bucket the answer is about: the tightest one, or the one that refused. */
  bucket: number;
  limit: number;
  remaining: number;
  /** Seconds until that bucket's oldest counted request leaves the window and frees a slot. */
  resetSeconds: number;
};

/** Hits older than the longest window any policy uses are dropped by the alarm. */
const LONGEST_WINDOW_MS = 24 * 60 * 60 * 1000;

/**
 * One instance per tenant (an account, or a client address): a rolling-window log of
 * accepted requests per policy and subject, in the object's SQLite storage. Every bucket a request
 * counts against lives in the same instance, so one call checks and counts them all at once.
 * `consume` runs without awaiting, so concurrent calls are serialized by the runtime and counting
 * is exact.
 */
export class RateLimiter extends DurableObject<Env> {
  #alarmArmed = false;
  /** `consumeInMemory`'s windows: accepted requests' times, oldest first, by policy and subject. */
  #memory = new Map<string, number[]>();
  #memorySweptAt = 0;
  /** The views this client address started, by video (`consumeBeacon`). */
  #viewStarts = new ViewStarts(VIEW_STARTS.limit, VIEW_STARTS.windowSeconds * 1000, VIEW_STARTS.memorySeconds * 1000);

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    // `hits` (one bucket per object, before tenant buckets) holds only seconds of state: drop it.
    ctx.storage.sql.exec(
      "DROP TABLE IF EXISTS hits;" +
        "CREATE TABLE IF NOT EXISTS bucket_hits (policy TEXT NOT NULL, subject TEXT NOT NULL, at INTEGER NOT NULL);" +
        "CREATE INDEX IF NOT EXISTS bucket_hits_at ON bucket_hits (policy, subject, at);",
    );
  }

  consume(input: ConsumeInput, now: number = Date.now()): ConsumeResult {
    return this.#answer(input, now, true);
  }

  /**
   * What `consume` would answer, counting nothing: for a request that must be refused while a
   * bucket is full but must not use it up (a right operator token after failed ones).
   */
  peek(input: ConsumeInput, now: number = Date.now()): ConsumeResult {
    return this.#answer(input, now, false);
  }

  #answer(input: ConsumeInput, now: number, counts: boolean): ConsumeResult {
    const { policy, windowSeconds, buckets } = ConsumeInput.parse(input);
    const windowMs = windowSeconds * 1000;
    const sql = this.ctx.storage.sql;
    const states = buckets.map(({ subject, limit }) => {
      sql.exec("DELETE FROM bucket_hits WHERE policy = ? AND subject = ? AND at <= ?", policy, subject, now - windowMs);
      const { count, oldest } = sql
        .exec<{ count: number; oldest: number | null }>(
          "SELECT count(*) AS count, min(at) AS oldest FROM bucket_hits WHERE policy = ? AND subject = ?",
          policy,
          subject,
        )
        .one();
      const resetSeconds = Math.max(1, Math.ceil(((oldest ?? now) + windowMs - now) / 1000));
      return { subject, limit, count, resetSeconds };
    });
    const full = states.map((state, bucket) => ({ ...state, bucket })).filter((state) => state.count >= state.limit);
    if (full.length > 0) {
      // A request may pass only when every full bucket has freed a slot: report the last to do so.
      const last = full.reduce((a, b) => (b.resetSeconds > a.resetSeconds ? b : a));
      return { allowed: false, bucket: last.bucket, limit: last.limit, remaining: 0, resetSeconds: last.resetSeconds };
    }
    if (counts) {
      for (const { subject } of states)
        sql.exec("INSERT INTO bucket_hits (policy, subject, at) VALUES (?, ?, ?)", policy, subject, now);
      this.#armAlarm(now);
    }
    let tightest = 0;
    states.forEach((state, i) => {
      const best = states[tightest] as (typeof states)[number];
      if (state.limit - state.count < best.limit - best.count) tightest = i;
    });
    const state = states[tightest] as (typeof states)[number];
    return {
      allowed: true,
      bucket: tightest,
      limit: state.limit,
      remaining: state.limit - state.count - (counts ? 1 : 0),
      resetSeconds: state.resetSeconds,
    };
  }

  /**
   * `consume`, counted in the object's memory instead of its SQLite storage: no storage write per
   * request, for high-volume policies (viewing beacons). Exact while the object lives; an object is
   * evicted only after a while without requests (longer than any window here, so every window it
   * held is empty by then) or when the runtime restarts it, which forgets at most one window.
   */
  consumeInMemory(input: ConsumeInput, now: number = Date.now()): ConsumeResult {
    const { policy, windowSeconds, buckets } = ConsumeInput.parse(input);
    const windowMs = windowSeconds * 1000;
    const states = buckets.map(({ subject, limit }) => {
      const key = `${policy} ${subject}`;
      const hits = (this.#memory.get(key) ?? []).filter((at) => at > now - windowMs);
      this.#memory.set(key, hits);
      const resetSeconds = Math.max(1, Math.ceil(((hits[0] ?? now) + windowMs - now) / 1000));
      return { hits, limit, resetSeconds };
    });
    const full = states
      .map((state, bucket) => ({ ...state, bucket }))
      .filter((state) => state.hits.length >= state.limit);
    if (full.length > 0) {
      const last = full.reduce((a, b) => (b.resetSeconds > a.resetSeconds ? b : a));
      return { allowed: false, bucket: last.bucket, limit: last.limit, remaining: 0, resetSeconds: last.resetSeconds };
    }
    for (const state of states) state.hits.push(now);
    // Once a window, windows left empty are dropped: memory follows the clients of the last window.
    if (now - this.#memorySweptAt > windowMs) {
      this.#memorySweptAt = now;
      for (const [key, hits] of this.#memory) if ((hits.at(-1) ?? 0) <= now - windowMs) this.#memory.delete(key);
    }
    let tightest = 0;
    states.forEach((state, i) => {
      const best = states[tightest] as (typeof states)[number];
      if (state.limit - state.hits.length < best.limit - best.hits.length) tightest = i;
    });
    const state = states[tightest] as (typeof states)[number];
    return {
      allowed: true,
      bucket: tightest,
      limit: state.limit,
      remaining: state.limit - state.hits.length,
      resetSeconds: state.resetSeconds,
    };
  }

  /**
   * A viewing beacon (docs/analytics.md), in memory: `consumeInMemory` over its buckets, then,
   * when it passes, whether it counts: a beacon of a view this address started, or of one it may
   * still start within its views of the video a minute (`ViewStarts`). One that passes but does not
   * count is answered `204` and adds nothing.
   */
  consumeBeacon(input: BeaconInput, now: number = Date.now()): ConsumeResult & { counts: boolean } {
    const { view, ...buckets } = BeaconInput.parse(input);
    const result = this.consumeInMemory(buckets, now);
    return { ...result, counts: result.allowed && this.#viewStarts.admit(view.videoId, view.viewId, now) };
  }

  /** Gives back the latest counted request of a bucket (a reservation that turned out not to count). */
  release(input: z.infer<typeof ReleaseInput>): void {
    const { policy, subject } = ReleaseInput.parse(input);
    this.ctx.storage.sql.exec(
      "DELETE FROM bucket_hits WHERE rowid = (SELECT rowid FROM bucket_hits WHERE policy = ? AND subject = ? ORDER BY at DESC LIMIT 1)",
      policy,
      subject,
    );
  }

  /** Drops hits of buckets nobody has used for a day, so an idle object keeps no storage. */
  override alarm(): void {
    this.#alarmArmed = false;
    const sql = this.ctx.storage.sql;
    sql.exec("DELETE FROM bucket_hits WHERE at <= ?", Date.now() - LONGEST_WINDOW_MS);
    const left = sql.exec<{ n: number }>("SELECT count(*) AS n FROM bucket_hits").one().n;
    if (left > 0) this.#armAlarm(Date.now());
  }

  #armAlarm(now: number): void {
    if (this.#alarmArmed) return;
    this.#alarmArmed = true;
    void this.ctx.storage.setAlarm(now + LONGEST_WINDOW_MS);
  }
}
