/**
 * The views one client address starts (docs/analytics.md, "New views per address"): at most `limit` views of a video in
 * any window of `windowMs`; a beacon of a view past them counts nothing (it is answered `204` and
 * not queued), so invented view ids cannot add views, nor the watch time each view may add. Kept in
 * the address's RateLimiter object's memory beside its beacon buckets: the object already sees every
 * beacon of the address, so this costs no call and no storage write of its own.
 *
 * A view the address started is remembered while its beacons keep coming (until `memoryMs` pass
 * without one), and every beacon of it counts. One forgotten (a long pause, the object evicted) is
 * started again by its next beacon, if the window has room, or by a later one: the fold credits it
 * the wall time since its last counted beacon, so a resumed honest view loses no watch time and
 * still counts once (src/analytics/fold.ts). Pure: time is given.
 */
export class ViewStarts {
  /** When each started view (`<videoId> <viewId>`) was last seen, oldest first. */
  #views = new Map<string, number>();
  /** When views of each video started within the window, oldest first. */
  #starts = new Map<string, number[]>();
  #sweptAt = 0;

  constructor(
    private readonly limit: number,
    private readonly windowMs: number,
    private readonly memoryMs: number,
  ) {}

  /**
   * Whether a beacon of `viewId` for `videoId` counts, at `now`: yes for a view this address has
   * started and not forgotten; else the view starts now when fewer than `limit` views of the video
   * started within the window, and counts; else it does not.
   */
  admit(videoId: string, viewId: string, now: number): boolean {
    this.#sweep(now);
    const view = `${videoId} ${viewId}`;
    const seen = this.#views.get(view);
    if (seen === undefined || seen <= now - this.memoryMs) {
      const starts = (this.#starts.get(videoId) ?? []).filter((at) => at > now - this.windowMs);
      this.#starts.set(videoId, starts);
      if (starts.length >= this.limit) return false;
      starts.push(now);
    }
    // Deleted first, so the map stays in the order views were last seen (the sweep's order).
    this.#views.delete(view);
    this.#views.set(view, now);
    return true;
  }

  /** How many views are remembered: what the object's memory holds for them. */
  get remembered(): number {
    return this.#views.size;
  }

  /** Once a window: forgets the views not seen for `memoryMs`, and the videos with no start in the window. */
  #sweep(now: number): void {
    if (now - this.#sweptAt < this.windowMs) return;
    this.#sweptAt = now;
    for (const [view, seen] of this.#views) {
      if (seen > now - this.memoryMs) break;
      this.#views.delete(view);
    }
    for (const [videoId, starts] of this.#starts) {
      if ((starts.at(-1) ?? 0) <= now - this.windowMs) this.#starts.delete(videoId);
    }
  }
}
