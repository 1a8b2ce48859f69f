/**
 * Forgetting, for memos that the writers which change their values cannot import (a writer's
 * folder below the reader's): the writer calls `forget`, every memo built on this forgets at once.
 * Its count is the memos' ticket: a read that began before a `forget` stores nothing.
 */
export class Forgetting {
  readonly #listeners: ((keys?: Iterable<string>) => void)[] = [];
  #count = 0;

  get count(): number {
    return this.#count;
  }

  listen(listener: (keys?: Iterable<string>) => void): void {
    this.#listeners.push(listener);
  }

  /** Drops the entries of `keys` in every memo built on this; with no keys, every entry. */
  forget(keys?: Iterable<string>): void {
    this.#count += 1;
    const named = keys === undefined ? undefined : [...keys];
    for (const listener of this.#listeners) listener(named);
  }
}

/**
 * Values kept in this isolate's memory for a short time, by key: what a hot path may reuse
 * instead of reading storage again (a video's playback state, `src/playback/state.ts`).
 * An entry older than `ttlMs` is never returned; at most `capacity` entries are kept (the oldest
 * stored goes first). `forget` (here or on its `Forgetting`) drops entries at once, and a read that
 * began before a `forget` (its `ticket` is older) stores nothing, so a write's change is never
 * undone by a read that crossed it.
 */
export class Memo<T> {
  readonly #entries = new Map<string, { value: T; at: number }>();

  constructor(
    readonly ttlMs: number,
    readonly capacity: number,
    readonly forgetting: Forgetting = new Forgetting(),
  ) {
    forgetting.listen((keys) => this.#drop(keys));
  }

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
    return this.forgetting.count;
  }

  set(key: string, value: T, at: number, ticket: number): void {
    if (ticket !== this.forgetting.count) return;
    this.#entries.delete(key);
    this.#entries.set(key, { value, at });
    if (this.#entries.size > this.capacity) {
      const oldest = this.#entries.keys().next();
      if (!oldest.done) this.#entries.delete(oldest.value);
    }
  }

  /** Drops the entries of `keys`; with no keys, every entry (in every memo of its `Forgetting`). */
  forget(keys?: Iterable<string>): void {
    this.forgetting.forget(keys);
  }

  #drop(keys?: Iterable<string>): void {
    if (keys === undefined) {
      this.#entries.clear();
      return;
    }
    for (const key of keys) this.#entries.delete(key);
  }
}
