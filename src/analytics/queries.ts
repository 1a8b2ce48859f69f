import { type Db, IN_JSON_LIST } from "../lib/db";
import { modeParam, type Tenant } from "../lib/tenant";
import type { Fold, ViewState } from "./fold";
import { STARTUP_COLUMNS } from "./startup";

/** The counters an hour of a subject adds up (analytics_hours): written by the fold, summed by the reports. */
const HOUR_COUNTERS = ["views", "watch_ms", "rebuffer_ms", "rebuffer_count", "error_views", ...STARTUP_COLUMNS];

type ViewRow = {
  view_id: string;
  video_id: string;
  watched_ms: number;
  rebuffer_ms: number;
  rebuffer_count: number;
  startup_ms: number | null;
  errored: number;
  started_at: number;
  last_at: number;
  version: number;
};

/** The stored state of these views (one read, whatever their number), by view id. */
export async function readViews(db: Db, viewIds: string[]): Promise<Map<string, ViewState>> {
  const { results } = await db
    .prepare(`SELECT * FROM analytics_views WHERE view_id IN (${IN_JSON_LIST})`)
    .bind(JSON.stringify(viewIds))
    .all<ViewRow>();
  return new Map(
    results.map((row) => [
      row.view_id,
      {
        viewId: row.view_id,
        videoId: row.video_id,
        watchedMs: row.watched_ms,
        rebufferMs: row.rebuffer_ms,
        rebufferCount: row.rebuffer_count,
        startupMs: row.startup_ms,
        errored: row.errored === 1,
        startedAt: row.started_at,
        lastAt: row.last_at,
        version: row.version,
      },
    ]),
  );
}

const at = (i: number) => `json_extract(e.value, '$[${i}]')`;

/**
 * A fold's writes, to run as one `batch()` (one transaction): first the guard, which fails the
 * whole batch (a CHECK on analytics_fold_conflicts) when a view it changes is no longer at the
 * version the fold read, as when two consumers fold beacons of one view at once; then the views,
 * the hourly rollups and the renditions' rollups, each one statement whatever the number of rows
 * (their values bound as one JSON array). Rollups add; views are replaced.
 */
export function foldStatements(db: Db, fold: Fold): D1PreparedStatement[] {
  const statements: D1PreparedStatement[] = [];
  if (fold.views.length > 0) {
    statements.push(
      db
        .prepare(
          `INSERT INTO analytics_fold_conflicts (conflict)
             SELECT 1 FROM json_each(?) AS e LEFT JOIN analytics_views AS v ON v.view_id = ${at(0)}
             WHERE coalesce(v.version, 0) <> ${at(1)} LIMIT 1`,
        )
        .bind(JSON.stringify(fold.expected.map((view) => [view.viewId, view.version]))),
      db
        .prepare(
          `INSERT INTO analytics_views
             (view_id, video_id, watched_ms, rebuffer_ms, rebuffer_count, startup_ms, errored, started_at, last_at, version)
           SELECT ${[0, 1, 2, 3, 4, 5, 6, 7, 8, 9].map(at).join(", ")} FROM json_each(?) AS e WHERE true
           ON CONFLICT (view_id) DO UPDATE SET watched_ms = excluded.watched_ms, rebuffer_ms = excluded.rebuffer_ms,
             rebuffer_count = excluded.rebuffer_count, startup_ms = excluded.startup_ms, errored = excluded.errored,
             last_at = excluded.last_at, version = excluded.version`,
        )
        .bind(
          JSON.stringify(
            fold.views.map((v) => [
              v.viewId,
              v.videoId,
              v.watchedMs,
              v.rebufferMs,
              v.rebufferCount,
              v.startupMs,
              v.errored ? 1 : 0,
              v.startedAt,
              v.lastAt,
              v.version,
            ]),
          ),
        ),
    );
  }
  if (fold.hours.length > 0) {
    const counters = HOUR_COUNTERS;
    statements.push(
      db
        .prepare(
          `INSERT INTO analytics_hours (subject, hour, project_id, livemode, ${counters.join(", ")})
           SELECT ${Array.from({ length: 4 + counters.length }, (_, i) => at(i)).join(", ")}
             FROM json_each(?) AS e WHERE true
           ON CONFLICT (subject, hour) DO UPDATE SET
             ${counters.map((c) => `${c} = ${c} + excluded.${c}`).join(", ")}`,
        )
        .bind(
          JSON.stringify(
            fold.hours.map((h) => [
              h.subject,
              h.hour,
              h.projectId,
              h.livemode ? 1 : 0,
              h.views,
              h.watchMs,
              h.rebufferMs,
              h.rebufferCount,
              h.errorViews,
              ...h.startup,
            ]),
          ),
        ),
    );
    const renditions = fold.hours.flatMap((h) =>
      [...h.renditions].map(([resolution, watchMs]) => [h.subject, h.hour, resolution, watchMs]),
    );
    if (renditions.length > 0) {
      statements.push(
        db
          .prepare(
            `INSERT INTO analytics_rendition_hours (subject, hour, resolution, watch_ms)
             SELECT ${[0, 1, 2, 3].map(at).join(", ")} FROM json_each(?) AS e WHERE true
             ON CONFLICT (subject, hour, resolution) DO UPDATE SET watch_ms = watch_ms + excluded.watch_ms`,
          )
          .bind(JSON.stringify(renditions)),
      );
    }
  }
  return statements;
}

/** One hour of the subjects asked for, added up. */
export type HourRow = {
  hour: number;
  views: number;
  watch_ms: number;
  rebuffer_ms: number;
  rebuffer_count: number;
  error_views: number;
} & Record<string, number>;

export type TopVideoRow = { video_id: string; title: string | null; views: number; watch_ms: number };

/**
 * Everything an answer reads, in one D1 round trip: the subjects' hours from `fromHour` up to
 * `toHour` (excluded), added up per hour; their watch time per rendition; and, with `top`, the
 * project's ten videos with the most watch time in those hours (live videos only, with their
 * titles). Each reads only rollups: its cost follows the hours asked for, not the views.
 */
export async function readRollups(
  db: Db,
  subjects: string[],
  fromHour: number,
  toHour: number,
  top?: Tenant,
): Promise<{ hours: HourRow[]; renditions: { resolution: string; watch_ms: number }[]; top: TopVideoRow[] }> {
  const list = JSON.stringify(subjects);
  const sums = HOUR_COUNTERS.map((c) => `sum(${c}) AS ${c}`).join(", ");
  const statements = [
    db
      .prepare(
        `SELECT hour, ${sums} FROM analytics_hours
         WHERE subject IN (${IN_JSON_LIST}) AND hour >= ? AND hour < ? GROUP BY hour ORDER BY hour`,
      )
      .bind(list, fromHour, toHour),
    db
      .prepare(
        `SELECT resolution, sum(watch_ms) AS watch_ms FROM analytics_rendition_hours
         WHERE subject IN (${IN_JSON_LIST}) AND hour >= ? AND hour < ? GROUP BY resolution`,
      )
      .bind(list, fromHour, toHour),
  ];
  if (top) statements.push(topVideosStatement(db, top, fromHour, toHour));
  const [hours, renditions, videos] = await db.batch([...statements]);
  return {
    hours: (hours?.results ?? []) as HourRow[],
    renditions: (renditions?.results ?? []) as { resolution: string; watch_ms: number }[],
    top: (videos?.results ?? []) as TopVideoRow[],
  };
}

/** The project's ten videos with the most watch time in the hours, in the tenant's mode or both. */
function topVideosStatement(db: Db, tenant: Tenant, fromHour: number, toHour: number): D1PreparedStatement {
  return db
    .prepare(
      `SELECT h.subject AS video_id, v.title AS title, sum(h.views) AS views, sum(h.watch_ms) AS watch_ms
         FROM analytics_hours AS h JOIN videos AS v ON v.id = h.subject AND v.deleted_at IS NULL
        WHERE h.project_id = ? AND h.hour >= ? AND h.hour < ? AND h.subject NOT LIKE 'project:%'
          AND v.project_id = ? AND v.livemode = coalesce(?, v.livemode)
        GROUP BY h.subject ORDER BY sum(h.watch_ms) DESC, h.subject LIMIT 10`,
    )
    .bind(tenant.projectId, fromHour, toHour, tenant.projectId, modeParam(tenant));
}

/** Deletes up to `limit` views started before `before` (ms), oldest first; how many it deleted. */
export async function deleteViewsStartedBefore(db: Db, before: number, limit: number): Promise<number> {
  const result = await db
    .prepare(
      `DELETE FROM analytics_views
       WHERE view_id IN (SELECT view_id FROM analytics_views WHERE started_at < ? ORDER BY started_at LIMIT ?)`,
    )
    .bind(before, limit)
    .run();
  return result.meta.changes;
}
