import { DAY, HOUR } from "../lib/time";
import type { HourRow, TopVideoRow } from "./queries";
import { STARTUP_COLUMNS, startupPercentile } from "./startup";

export const INTERVALS = { hour: HOUR, day: DAY } as const;
export type Interval = keyof typeof INTERVALS;

export type Analytics = {
  views: number;
  watchTimeSeconds: number;
  startupTimeMs: { p50: number; p95: number } | null;
  rebufferRatio: number;
  errorViews: number;
  renditions: { resolution: string; share: number }[];
  series: { start: string; views: number; watchTimeSeconds: number }[];
};

const seconds = (ms: number) => Math.round(ms) / 1000;
const ratio = (part: number, whole: number) => (whole > 0 ? Math.round((part / whole) * 10_000) / 10_000 : 0);

/**
 * The figures of docs/analytics.md from hourly rollups: totals over the hours read, startup p50
 * and p95 from the summed histogram (null without a startup), rebuffer time over watch time, each
 * rendition's share of the watch time that named one (largest first), and one series point per
 * `interval` from the one holding `from` up to `to`, empty ones included.
 */
export function analyticsOf(
  rows: { hours: HourRow[]; renditions: { resolution: string; watch_ms: number }[] },
  range: { from: number; to: number; interval: Interval },
): Analytics {
  const step = INTERVALS[range.interval];
  const first = Math.floor(range.from / step) * step;
  const points = new Map<number, { views: number; watchMs: number }>();
  for (let start = first; start < range.to; start += step) points.set(start, { views: 0, watchMs: 0 });
  const totals = { views: 0, watchMs: 0, rebufferMs: 0, errorViews: 0 };
  const startup = new Array<number>(STARTUP_COLUMNS.length).fill(0);
  for (const row of rows.hours) {
    totals.views += row.views;
    totals.watchMs += row.watch_ms;
    totals.rebufferMs += row.rebuffer_ms;
    totals.errorViews += row.error_views;
    STARTUP_COLUMNS.forEach((column, i) => {
      startup[i] = (startup[i] ?? 0) + (row[column] ?? 0);
    });
    const point = points.get(Math.floor((row.hour * HOUR) / step) * step);
    if (point) {
      point.views += row.views;
      point.watchMs += row.watch_ms;
    }
  }
  const p50 = startupPercentile(startup, 0.5);
  const p95 = startupPercentile(startup, 0.95);
  const renditionMs = rows.renditions.reduce((sum, r) => sum + r.watch_ms, 0);
  return {
    views: totals.views,
    watchTimeSeconds: seconds(totals.watchMs),
    startupTimeMs: p50 === null || p95 === null ? null : { p50, p95 },
    rebufferRatio: ratio(totals.rebufferMs, totals.watchMs),
    errorViews: totals.errorViews,
    renditions: rows.renditions
      .filter((r) => r.watch_ms > 0)
      .sort((a, b) => b.watch_ms - a.watch_ms || a.resolution.localeCompare(b.resolution))
      .map((r) => ({ resolution: r.resolution, share: ratio(r.watch_ms, renditionMs) })),
    series: [...points].map(([start, point]) => ({
      start: new Date(start).toISOString(),
      views: point.views,
      watchTimeSeconds: seconds(point.watchMs),
    })),
  };
}

export function topVideosOf(rows: TopVideoRow[]) {
  return rows.map((row) => ({
    videoId: row.video_id,
    title: row.title,
    views: row.views,
    watchTimeSeconds: seconds(row.watch_ms),
  }));
}
