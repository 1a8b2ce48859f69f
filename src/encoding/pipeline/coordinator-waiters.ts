/** What a viewer waiting on a segment or a frame is told: stored, never to be, or failed. */
export type Outcome = "stored" | "gone" | "failed";
type Waiter = { resolve: (outcome: Outcome) => void };

/** What a viewer of segment `index` of `rendition` waits for. */
export function segmentWaited(rendition: string, index: number): string {
  return `${rendition}/${index}`;
}

/** What a viewer of output frame `frame` at `width` pixels waits for. */
export function frameWaited(frame: number, width: number): string {
  return `frame/${frame}/${width}`;
}

/** Whether a viewer waits for a frame (`frameWaited`) rather than a segment. */
export function isFrameWaited(key: string): boolean {
  return key.startsWith("frame/");
}

/**
 * The viewers a video's coordinator keeps waiting, by what they wait for (`segmentWaited`,
 * `frameWaited`): each is answered when it is woken, or told `pending` after its time. In memory
 * only: a viewer's request lasts no longer than the object.
 */
export class Waiters {
  private readonly waiting = new Map<string, Waiter[]>();

  /**
   * What becomes of `key` (`wake`), or `pending` after `timeoutMs`; `onAbandoned` runs when the
   * last viewer of `key` stops waiting so.
   */
  async waitFor(key: string, timeoutMs: number, onAbandoned: () => void): Promise<Outcome | "pending"> {
    const waiter: Waiter = { resolve: () => {} };
    const answer = new Promise<Outcome>((resolve) => {
      waiter.resolve = resolve;
      this.waiting.set(key, [...(this.waiting.get(key) ?? []), waiter]);
    });
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timeout = new Promise<"pending">((resolve) => {
      timer = setTimeout(() => resolve("pending"), timeoutMs);
    });
    try {
      const outcome = await Promise.race([answer, timeout]);
      if (outcome === "pending" && this.leave(key, waiter)) onAbandoned();
      return outcome;
    } finally {
      clearTimeout(timer);
    }
  }

  /** Answers every viewer of `key`. */
  wake(key: string, outcome: Outcome) {
    const waiting = this.waiting.get(key);
    if (!waiting) return;
    this.waiting.delete(key);
    for (const waiter of waiting) waiter.resolve(outcome);
  }

  /** What viewers wait for now. */
  keys(): string[] {
    return [...this.waiting.keys()];
  }

  /** `waiter` stops waiting for `key`: true when nobody waits for it any more. */
  private leave(key: string, waiter: Waiter): boolean {
    const left = (this.waiting.get(key) ?? []).filter((w) => w !== waiter);
    if (left.length > 0) {
      this.waiting.set(key, left);
      return false;
    }
    this.waiting.delete(key);
    return true;
  }
}
