/** How figures read in the dashboard: short, the same everywhere. */

/** Seconds as `m:ss` or `h:mm:ss`; null (not probed yet) as an en dash. */
export function formatDuration(seconds: number | null | undefined): string {
  if (seconds === null || seconds === undefined || !Number.isFinite(seconds)) return "–";
  const whole = Math.round(seconds);
  const h = Math.floor(whole / 3600);
  const m = Math.floor((whole % 3600) / 60);
  const s = whole % 60;
  const pad = (n: number) => String(n).padStart(2, "0");
  return h > 0 ? `${h}:${pad(m)}:${pad(s)}` : `${m}:${pad(s)}`;
}

/** An ISO timestamp as a short UTC date and time (`2026-11-22 06:00`), the same for every reader. */
export function formatTime(iso: string | null | undefined): string {
  if (!iso) return "–";
  return `${iso.slice(0, 10)} ${iso.slice(11, 16)}`;
}

/** A count with thousands grouped (`12,345`). */
export function formatCount(n: number): string {
  return Math.round(n).toLocaleString("en-US");
}

/** Watch time in the largest unit that keeps it readable: `45 s`, `12.5 min`, `3.2 h`. */
export function formatWatchTime(seconds: number): string {
  if (seconds < 60) return `${Math.round(seconds)} s`;
  if (seconds < 3600) return `${round1(seconds / 60)} min`;
  return `${round1(seconds / 3600)} h`;
}

/** Milliseconds as `850 ms` or `1.2 s`. */
export function formatMs(ms: number | null | undefined): string {
  if (ms === null || ms === undefined) return "–";
  return ms < 1000 ? `${Math.round(ms)} ms` : `${round1(ms / 1000)} s`;
}

/** A ratio 0–1 as a percent with one decimal. */
export function formatPercent(ratio: number): string {
  return `${round1(ratio * 100)} %`;
}

function round1(n: number): string {
  return (Math.round(n * 10) / 10).toFixed(1).replace(/\.0$/, "");
}
