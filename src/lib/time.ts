/** ISO 8601 UTC with milliseconds, the one timestamp format of the API. */
export function isoTime(ms: number): string {
  return new Date(ms).toISOString();
}

export const SECOND = 1000;
export const MINUTE = 60 * SECOND;
export const DAY = 24 * 60 * MINUTE;

/**
 * A wake-up after `ms`, that can be called off (a race against a read must not leave its timer
 * behind). Code that waits takes one, so tests can pass a virtual clock's instead of waiting.
 */
export type Timer = (ms: number) => { fired: Promise<void>; cancel: () => void };

export const realTimer: Timer = (ms) => {
  let id: ReturnType<typeof setTimeout> | undefined;
  const fired = new Promise<void>((resolve) => {
    id = setTimeout(resolve, ms);
  });
  return { fired, cancel: () => clearTimeout(id) };
};
