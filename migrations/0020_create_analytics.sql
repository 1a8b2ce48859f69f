-- Viewing analytics (docs/analytics.md, src/analytics/). Beacons reach D1 only through the
-- video-beacons queue, whose consumer folds a whole batch into these tables in one batch().

-- Per-view state: the totals a view has been credited with so far (bounded: watch time grows by
-- at most the wall time since the view's previous beacon plus 10 %), so a repeated or reordered
-- beacon counts once. `last_at` is when the Worker received the view's latest beacon (ms),
-- `started_at` its first (kept for two days: src/analytics/retention.ts); `version` counts the
-- folds that changed the row: a fold writes only over the version it read.
CREATE TABLE analytics_views (
  view_id TEXT NOT NULL PRIMARY KEY,
  video_id TEXT NOT NULL,
  watched_ms INTEGER NOT NULL,
  rebuffer_ms INTEGER NOT NULL,
  rebuffer_count INTEGER NOT NULL,
  startup_ms INTEGER,
  errored INTEGER NOT NULL DEFAULT 0,
  started_at INTEGER NOT NULL,
  last_at INTEGER NOT NULL,
  version INTEGER NOT NULL
) WITHOUT ROWID;

-- The retention sweep's order. Written once per view: a fold's update never changes started_at.
CREATE INDEX analytics_views_started ON analytics_views (started_at);

-- Hourly rollups, per video (subject = the video id) and per project and mode (subject =
-- 'project:<id>:live' or 'project:<id>:test'), so an answer reads at most 24 x 90 rows of a subject
-- whatever its number of views. s00..s15 count views by startup time (src/analytics/startup.ts).
CREATE TABLE analytics_hours (
  subject TEXT NOT NULL,
  hour INTEGER NOT NULL,
  project_id TEXT NOT NULL,
  livemode INTEGER NOT NULL,
  views INTEGER NOT NULL DEFAULT 0,
  watch_ms INTEGER NOT NULL DEFAULT 0,
  rebuffer_ms INTEGER NOT NULL DEFAULT 0,
  rebuffer_count INTEGER NOT NULL DEFAULT 0,
  error_views INTEGER NOT NULL DEFAULT 0,
  s00 INTEGER NOT NULL DEFAULT 0, s01 INTEGER NOT NULL DEFAULT 0, s02 INTEGER NOT NULL DEFAULT 0,
  s03 INTEGER NOT NULL DEFAULT 0, s04 INTEGER NOT NULL DEFAULT 0, s05 INTEGER NOT NULL DEFAULT 0,
  s06 INTEGER NOT NULL DEFAULT 0, s07 INTEGER NOT NULL DEFAULT 0, s08 INTEGER NOT NULL DEFAULT 0,
  s09 INTEGER NOT NULL DEFAULT 0, s10 INTEGER NOT NULL DEFAULT 0, s11 INTEGER NOT NULL DEFAULT 0,
  s12 INTEGER NOT NULL DEFAULT 0, s13 INTEGER NOT NULL DEFAULT 0, s14 INTEGER NOT NULL DEFAULT 0,
  s15 INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (subject, hour)
) WITHOUT ROWID;

-- A project's top videos: its video rows by hour (written once per new row; updates leave it alone).
CREATE INDEX analytics_hours_by_project ON analytics_hours (project_id, livemode, hour);

-- Watch time per rendition, per subject and hour.
CREATE TABLE analytics_rendition_hours (
  subject TEXT NOT NULL,
  hour INTEGER NOT NULL,
  resolution TEXT NOT NULL,
  watch_ms INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (subject, hour, resolution)
) WITHOUT ROWID;

-- Never holds a row: a fold's first statement inserts one (conflict = 1) when a view it read has
-- changed since, and the CHECK then fails the fold's whole batch, which the queue retries.
CREATE TABLE analytics_fold_conflicts (conflict INTEGER NOT NULL CHECK (conflict = 0));
