/**
 * Values kept in this isolate's memory for a short time, by key: what a hot path may reuse
 * instead of reading storage again (a video's playback state, `src/videos/playback-state.ts`).
 * An entry older than `ttlMs` is never returned; at most `capacity` entries are kept (the oldest
 * stored goes first). `forget` drops entries at once, and a read that began before a `forget`
 * (its `ticket` is older) stores nothing, so a write's change is never undone by a read that
 * crossed it.
 */
export class Memo<T> {
  readonly #entries = new Map<string, { value: T; at: number }>();
  #forgets = 0;

  constructor(
    readonly ttlMs: number,
    readonly capacity: number,
  ) {}

  /** The value stored for `key` less than `ttlMs` before `now`, if any. */
  get(key: string, now: number): T | undefined {
    const entry = this.#entries.get(key);
    if (!entry) return undefined;
    if (now - entry.at < this.ttlMs && now >= entry.at) return entry.value;
    this.#entries.delete(key);
    return undefined;
  }

  /** What a read takes before it starts: `set` stores its value only if nothing was forgotten since. */
  ticket(): number {
    return this.#forgets;
  }

  set(key: string, value: T, at: number, ticket: number): void {
    if (ticket !== this.#forgets) return;
    this.#entries.delete(key);
    this.#entries.set(key, { value, at });
    if (this.#entries.size > this.capacity) {
      const oldest = this.#entries.keys().next();
      if (!oldest.done) this.#entries.delete(oldest.value);
    }
  }

  /** Drops the entries of `keys`; with no keys, every entry. */
  forget(keys?: Iterable<string>): void {
    this.#forgets += 1;
    if (keys === undefined) {
      this.#entries.clear();
      return;
    }
    for (const key of keys) this.#entries.delete(key);
  }
}
