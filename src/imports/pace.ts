/**
 * The pace an origin must keep while it sends a file (docs/imports.md, "An import's own clock"): at
 * least `minBytes` in any `windowMs`, counted from the moment the file was asked for. An origin that
 * sends nothing for a window, or too little, fails the import. Pure: the times are given, so the
 * rule is tested at its real numbers without waiting for them.
 */

export type Pace = { windowMs: number; minBytes: number };

/** Why an origin fell behind its pace. */
export type Behind = "nothing" | "too_little";

/** A run's record of what arrived when, just enough of it to tell when the origin falls behind. */
export class PaceWindow {
  /** Arrivals, oldest first: only as many as the newest `minBytes` take (older ones no longer matter). */
  #arrivals: { at: number; bytes: number }[] = [];
  #held = 0;
  #since: number;
  #last: number;

  constructor(
    private readonly pace: Pace,
    since: number,
  ) {
    this.#since = since;
    this.#last = since;
  }

  arrived(at: number, bytes: number): void {
    if (bytes <= 0) return;
    this.#arrivals.push({ at, bytes });
    this.#held += bytes;
    this.#last = at;
    // Drop the oldest arrivals while the newer ones alone make up `minBytes`.
    for (;;) {
      const oldest = this.#arrivals[0];
      if (!oldest || this.#held - oldest.bytes < this.pace.minBytes) break;
      this.#arrivals.shift();
      this.#held -= oldest.bytes;
    }
  }

  /**
   * The run itself was busy for `ms` (storing a part, renewing its lease) and read nothing
   * meanwhile: that time is not the origin's, so every moment recorded moves on by it.
   */
  pause(ms: number): void {
    if (ms <= 0) return;
    this.#since += ms;
    this.#last += ms;
    for (const arrival of this.#arrivals) arrival.at += ms;
  }

  /**
   * The moment the origin falls behind if nothing more arrives: a window after the newest
   * `minBytes` began to arrive (or after the start, while fewer have arrived in all).
   */
  deadline(): number {
    const from = this.#held >= this.pace.minBytes ? (this.#arrivals[0]?.at ?? this.#since) : this.#since;
    return Math.max(from, this.#since) + this.pace.windowMs;
  }

  /** Whether the origin has fallen behind by `now`, and how; null while it keeps its pace. */
  behind(now: number): Behind | null {
    if (now < this.deadline()) return null;
    return now - this.#last >= this.pace.windowMs ? "nothing" : "too_little";
  }
}
