/** ISO 8601 UTC with milliseconds, the one timestamp format of the API. */
export function isoTime(ms: number): string {
  return new Date(ms).toISOString();
}

export const SECOND = 1000;
export const MINUTE = 60 * SECOND;
export const HOUR = 60 * MINUTE;
export const DAY = 24 * HOUR;

/**
 * The instant of a UTC calendar date and time (month 1–12), or null when that day or time does not
 * exist: Date.UTC and Date.parse roll 30 February over into March and 24:00 into the next day, so a
 * text that names no real instant would be read as another one. A second of 60 (a leap second, which
 * HTTP dates may carry) is the next minute's first.
 */
export function utcTime(year: number, month: number, day: number, hour = 0, minute = 0, second = 0): number | null {
  if (month < 1 || month > 12 || hour > 23 || minute > 59 || second > 60) return null;
  const date = new Date(0);
  // setUTCFullYear, not Date.UTC: the latter reads years 0–99 as 1900–1999.
  date.setUTCFullYear(year, month - 1, day);
  if (date.getUTCDate() !== day) return null;
  return date.setUTCHours(hour, minute, second);
}

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
