/**
 * Startup time (play intent to the first moving frame) is kept as a histogram per subject and hour:
 * the views whose startup fell in each of these buckets (`s00`..`s15` in analytics_hours). Bucket i
 * holds startups from BOUNDS[i - 1] (0 for the first) up to BOUNDS[i] ms; the last is open-ended.
 * Percentiles are read from the buckets, interpolated within the one that holds them, so an answer
 * costs the same for ten views as for a million.
 */
export const STARTUP_BOUNDS_MS = [
  100, 200, 300, 400, 500, 700, 1000, 1500, 2000, 3000, 4000, 6000, 10_000, 20_000, 60_000,
] as const;

export const STARTUP_BUCKETS = STARTUP_BOUNDS_MS.length + 1;

/** The column of bucket `i`: s00..s15. */
export function startupColumn(i: number): string {
  return `s${String(i).padStart(2, "0")}`;
}

export const STARTUP_COLUMNS = Array.from({ length: STARTUP_BUCKETS }, (_, i) => startupColumn(i));

export function startupBucket(ms: number): number {
  const i = STARTUP_BOUNDS_MS.findIndex((bound) => ms < bound);
  return i === -1 ? STARTUP_BUCKETS - 1 : i;
}

/**
 * The `q` quantile (0 to 1) of the startups a histogram counts, or null when it counts none: the
 * bucket that holds it, interpolated linearly within it (the open-ended last bucket answers its
 * lower bound), rounded to the millisecond.
 */
export function startupPercentile(counts: readonly number[], q: number): number | null {
  const total = counts.reduce((a, b) => a + b, 0);
  if (total === 0) return null;
  const rank = q * total;
  let below = 0;
  for (let i = 0; i < counts.length; i++) {
    const count = counts[i] ?? 0;
    if (count > 0 && below + count >= rank) {
      const low = i === 0 ? 0 : (STARTUP_BOUNDS_MS[i - 1] as number);
      const high = STARTUP_BOUNDS_MS[i];
      if (high === undefined) return low;
      return Math.round(low + ((high - low) * Math.max(0, rank - below)) / count);
    }
    below += count;
  }
  return STARTUP_BOUNDS_MS[STARTUP_BOUNDS_MS.length - 1] as number;
}
