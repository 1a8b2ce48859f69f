/** ISO 8601 UTC with milliseconds, the one timestamp format of the API. */
export function isoTime(ms: number): string {
  return new Date(ms).toISOString();
}

export const SECOND = 1000;
export const MINUTE = 60 * SECOND;
export const DAY = 24 * 60 * MINUTE;
