import type { Schemas } from "./api";

// Viewing analytics as the dashboard shows them: the answers' type, and the charts' geometry (pure,
// unit-tested).

/** The answers of GET /v1/videos/{id}/analytics and GET /v1/analytics: a video's figures, a project's with its top videos. */
export type Analytics = Schemas["VideoAnalytics"] & { topVideos?: Schemas["ProjectAnalytics"]["topVideos"] };

export type Bar = { x: number; y: number; width: number; height: number; value: number; label: string };

/** A "nice" top for an axis: 1, 2 or 5 times a power of ten, at least the largest value (and at least 1). */
export function niceMax(max: number): number {
  if (!(max > 0)) return 1;
  const power = 10 ** Math.floor(Math.log10(max));
  for (const step of [1, 2, 5, 10]) if (step * power >= max) return step * power;
  return 10 * power;
}

/**
 * The bars of a series in a `width`×`height` plot: one per point, evenly spaced with a gap, heights
 * in proportion to niceMax of the values, and each bar's label (its start date, or hour for hourly series).
 */
export function barsOf(
  values: { start: string; value: number }[],
  width: number,
  height: number,
): { bars: Bar[]; max: number } {
  const max = niceMax(Math.max(0, ...values.map((point) => point.value)));
  const slot = values.length > 0 ? width / values.length : width;
  const gap = Math.min(4, slot * 0.2);
  const hourly = values.length > 1 && values.some((point) => !point.start.endsWith("T00:00:00.000Z"));
  const bars = values.map((point, index) => {
    const barHeight = (Math.max(0, point.value) / max) * height;
    return {
      x: index * slot + gap / 2,
      y: height - barHeight,
      width: Math.max(1, slot - gap),
      height: barHeight,
      value: point.value,
      label: hourly ? point.start.slice(11, 16) : point.start.slice(5, 10),
    };
  });
  return { bars, max };
}

/** Which labels to print under the bars so they do not overlap: every n-th, the last one always. */
export function labelledIndexes(count: number, width: number, labelWidth = 40): Set<number> {
  const every = Math.max(1, Math.ceil((count * labelWidth) / Math.max(width, 1)));
  const indexes = new Set<number>();
  for (let index = 0; index < count; index += every) indexes.add(index);
  if (count > 0) indexes.add(count - 1);
  return indexes;
}

/** The default window of the charts: the last `days` days up to `now`, by day. */
export function windowOf(now: Date, days = 7): { from: string; to: string; interval: "day" } {
  const from = new Date(now.getTime() - days * 86_400_000);
  return { from: from.toISOString(), to: now.toISOString(), interval: "day" };
}
