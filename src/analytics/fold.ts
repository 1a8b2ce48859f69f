import { HOUR } from "../lib/time";
import type { BeaconMessage } from "./beacon";
import { HEARTBEAT_MS } from "./heartbeat";
import { STARTUP_BUCKETS, startupBucket } from "./startup";

/** What is kept of a view between beacons: the totals credited to it so far. */
export type ViewState = {
  viewId: string;
  videoId: string;
  watchedMs: number;
  rebufferMs: number;
  rebufferCount: number;
  startupMs: number | null;
  errored: boolean;
  /** When the Worker received the view's first beacon (ms). */
  startedAt: number;
  /** When the Worker received the view's latest beacon (ms); an older one arriving late leaves it. */
  lastAt: number;
  /** How many folds changed the row; 0 for a view not stored yet. */
  version: number;
};

/** What one subject (a video, or a project in a mode) gained in one hour. */
export type HourDelta = {
  subject: string;
  hour: number;
  projectId: string;
  livemode: boolean;
  views: number;
  watchMs: number;
  rebufferMs: number;
  rebufferCount: number;
  errorViews: number;
  startup: number[];
  /** Watch time by rendition label. */
  renditions: Map<string, number>;
};

export type Fold = {
  /** The views the batch changed, as they are to be stored (version one past what was read). */
  views: ViewState[];
  /** The versions read of every view the batch changed (0: not stored), to write only over those. */
  expected: { viewId: string; version: number }[];
  hours: HourDelta[];
};

/** A view's watch time may grow by the wall time since its previous beacon and 10 % more. */
const SLACK = 1.1;
/**
 * A view's first beacon has no previous one: it is credited with at most one heartbeat's interval
 * and the slack, as if its previous beacon had come then.
 */
export const FIRST_BEACON_WINDOW_MS = HEARTBEAT_MS;

export function hourOf(ms: number): number {
  return Math.floor(ms / HOUR);
}

export function projectSubject(projectId: string, livemode: boolean): string {
  return `project:${projectId}:${livemode ? "live" : "test"}`;
}

/**
 * Folds a batch of beacons into the views' states (`read`: those stored, by view id) and the
 * hourly deltas of their videos and projects. Pure: the same batch over the same states gives the
 * same result, and a beacon whose totals are not above what its view was credited (repeated, or
 * arriving after a later one) adds nothing. Per view, in the order the Worker received them:
 * - the first beacon counts the view (once, in that beacon's hour);
 * - `watchedMs` and `rebufferMs` may each grow by at most the wall time since the view's previous
 *   beacon plus 10 %, `rebufferCount` by one more than the seconds passed; what a beacon claims
 *   beyond is not credited (the view keeps the bounded total);
 * - the first `startupMs` goes into the startup histogram, the first `error` counts an error view;
 * - watch time goes to the hour the beacon arrived in, and to its `rendition` when it names one.
 * A view id belongs to the first video it was seen with; beacons naming another are dropped.
 */
export function foldBeacons(read: ReadonlyMap<string, ViewState>, messages: readonly BeaconMessage[]): Fold {
  const ordered = [...messages].sort((a, b) => a.at - b.at || a.beacon.watchedMs - b.beacon.watchedMs);
  const states = new Map<string, ViewState>();
  const hours = new Map<string, HourDelta>();
  const deltaOf = (subject: string, message: BeaconMessage): HourDelta => {
    const hour = hourOf(message.at);
    const key = `${subject} ${hour}`;
    let delta = hours.get(key);
    if (!delta) {
      delta = {
        subject,
        hour,
        projectId: message.projectId,
        livemode: message.livemode,
        views: 0,
        watchMs: 0,
        rebufferMs: 0,
        rebufferCount: 0,
        errorViews: 0,
        startup: new Array<number>(STARTUP_BUCKETS).fill(0),
        renditions: new Map(),
      };
      hours.set(key, delta);
    }
    return delta;
  };

  for (const message of ordered) {
    const { beacon, at } = message;
    const stored = states.get(beacon.viewId) ?? read.get(beacon.viewId);
    if (stored && stored.videoId !== message.videoId) continue;
    const before: ViewState = stored ?? {
      viewId: beacon.viewId,
      videoId: message.videoId,
      watchedMs: 0,
      rebufferMs: 0,
      rebufferCount: 0,
      startupMs: null,
      errored: false,
      startedAt: at,
      lastAt: at - FIRST_BEACON_WINDOW_MS,
      version: 0,
    };
    const wall = Math.max(0, at - before.lastAt);
    const allowance = Math.floor(wall * SLACK);
    const bounded = (claimed: number, previous: number, most: number) =>
      Math.max(previous, Math.min(claimed, previous + most));
    const after: ViewState = {
      ...before,
      watchedMs: bounded(beacon.watchedMs, before.watchedMs, allowance),
      rebufferMs: bounded(beacon.rebufferMs, before.rebufferMs, allowance),
      rebufferCount: bounded(beacon.rebufferCount, before.rebufferCount, 1 + Math.floor(wall / 1000)),
      startupMs: before.startupMs ?? beacon.startupMs ?? null,
      errored: before.errored || beacon.error !== undefined,
      lastAt: Math.max(before.lastAt, at),
    };
    const gained = {
      views: stored ? 0 : 1,
      watchMs: after.watchedMs - before.watchedMs,
      rebufferMs: after.rebufferMs - before.rebufferMs,
      rebufferCount: after.rebufferCount - before.rebufferCount,
      errorViews: after.errored && !before.errored ? 1 : 0,
      startup: before.startupMs === null && after.startupMs !== null ? startupBucket(after.startupMs) : -1,
    };
    // A later beacon moves the view's clock even when its totals stand still (paused, say), so the
    // next one's allowance is the wall time since this one.
    const moved =
      gained.views + gained.watchMs + gained.rebufferMs + gained.rebufferCount + gained.errorViews > 0 ||
      gained.startup >= 0 ||
      after.lastAt > before.lastAt;
    if (!moved) continue;
    states.set(beacon.viewId, after);
    for (const subject of [message.videoId, projectSubject(message.projectId, message.livemode)]) {
      const delta = deltaOf(subject, message);
      delta.views += gained.views;
      delta.watchMs += gained.watchMs;
      delta.rebufferMs += gained.rebufferMs;
      delta.rebufferCount += gained.rebufferCount;
      delta.errorViews += gained.errorViews;
      if (gained.startup >= 0) delta.startup[gained.startup] = (delta.startup[gained.startup] ?? 0) + 1;
      if (beacon.rendition && gained.watchMs > 0) {
        delta.renditions.set(beacon.rendition, (delta.renditions.get(beacon.rendition) ?? 0) + gained.watchMs);
      }
    }
  }

  const views = [...states.values()];
  return {
    views: views.map((view) => ({ ...view, version: view.version + 1 })),
    expected: views.map((view) => ({ viewId: view.viewId, version: read.get(view.viewId)?.version ?? 0 })),
    hours: [...hours.values()],
  };
}
