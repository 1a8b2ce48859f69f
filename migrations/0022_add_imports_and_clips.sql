-- Imports and clips as videos (docs/imports.md, docs/import-clips-search.md): a video imported from
-- a URL (status `importing`, `error.code` `import_failed`) and a clip made from a span of another
-- video's source (`clipOf`). SQLite cannot change a CHECK in place, so the table is rebuilt with
-- the new status and error code. Its rowids are kept (video_titles, the title index of 0019, is
-- keyed by them) and the title triggers are made again; no table references videos, so nothing
-- cascades.
CREATE TABLE videos_new (
  id TEXT PRIMARY KEY,
  project_id TEXT NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
  title TEXT,
  status TEXT NOT NULL CHECK (status IN ('waiting_for_upload', 'importing', 'upload_completing', 'uploaded', 'processing', 'ready', 'errored')),
  visibility TEXT NOT NULL DEFAULT 'public' CHECK (visibility IN ('public', 'unlisted', 'private')),
  source_key TEXT NOT NULL,
  upload_id TEXT,
  upload_r2_id TEXT,
  upload_expires_at TEXT,
  completion_lease_until TEXT,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  deleted_at TEXT,
  custom_thumbnail_key TEXT,
  completed_parts TEXT,
  -- Encoding attempts started so far (3 at most); the attempt in `processing` is the latest.
  encode_attempt INTEGER NOT NULL DEFAULT 0,
  -- While `processing`: the last time its encoder was heard from. A silent attempt is taken over.
  encode_heartbeat_at TEXT,
  -- The project's encoding settings when the first attempt started (JSON), kept for every retry.
  encode_settings TEXT,
  -- The source as probed: seconds and display size (a clip's: its span).
  duration REAL,
  width INTEGER,
  height INTEGER,
  -- Once `ready`: the renditions (JSON), the attempt whose outputs are served, and whether it made an MP4.
  renditions TEXT,
  output_attempt INTEGER,
  has_mp4 INTEGER,
  -- Once `errored`: why.
  error_code TEXT CHECK (error_code IN ('invalid_source', 'encoding_failed', 'import_failed')),
  error_message TEXT,
  -- On a deleted video: when everything it stored in R2 was removed (null while anything may remain).
  storage_cleared_at TEXT,
  tus_upload_id TEXT,
  encode_plan TEXT,
  playable_at TEXT,
  livemode INTEGER NOT NULL DEFAULT 1 CHECK (livemode IN (0, 1)),
  tags TEXT NOT NULL DEFAULT '[]',
  metadata TEXT NOT NULL DEFAULT '{}',
  allowed_origins TEXT NOT NULL DEFAULT '[]',
  has_m4a INTEGER,
  -- An import (status `importing` until its source is whole): the URL asked for; the validator
  -- (ETag, else Last-Modified) of the first answer, sent as If-Range when a fetch resumes; the
  -- lease of the fetch running now (one at a time); the transient failures so far (three fail it).
  import_url TEXT,
  import_validator TEXT,
  import_lease_until TEXT,
  import_failures INTEGER NOT NULL DEFAULT 0,
  -- A clip: the video it was cut from and its span there (seconds). Its source_key is that video's
  -- source, kept in R2 while any clip of it is not cleaned up (src/videos/cleanup.ts).
  clip_of TEXT,
  clip_start REAL,
  clip_end REAL
);

INSERT INTO videos_new (rowid, id, project_id, title, status, visibility, source_key, upload_id, upload_r2_id,
  upload_expires_at, completion_lease_until, created_at, updated_at, deleted_at, custom_thumbnail_key,
  completed_parts, encode_attempt, encode_heartbeat_at, encode_settings, duration, width, height, renditions,
  output_attempt, has_mp4, error_code, error_message, storage_cleared_at, tus_upload_id, encode_plan,
  playable_at, livemode, tags, metadata, allowed_origins, has_m4a)
SELECT rowid, id, project_id, title, status, visibility, source_key, upload_id, upload_r2_id,
  upload_expires_at, completion_lease_until, created_at, updated_at, deleted_at, custom_thumbnail_key,
  completed_parts, encode_attempt, encode_heartbeat_at, encode_settings, duration, width, height, renditions,
  output_attempt, has_mp4, error_code, error_message, storage_cleared_at, tus_upload_id, encode_plan,
  playable_at, livemode, tags, metadata, allowed_origins, has_m4a
FROM videos;

DROP TABLE videos;
ALTER TABLE videos_new RENAME TO videos;

CREATE INDEX videos_project_created ON videos (project_id, created_at DESC, id DESC) WHERE deleted_at IS NULL;
CREATE INDEX videos_open_uploads ON videos (upload_expires_at) WHERE upload_r2_id IS NOT NULL AND deleted_at IS NULL;
CREATE INDEX videos_project ON videos (project_id);
CREATE INDEX videos_pending_cleanup ON videos (deleted_at) WHERE deleted_at IS NOT NULL AND storage_cleared_at IS NULL;
CREATE INDEX videos_encoding ON videos (status) WHERE status IN ('uploaded', 'processing') AND deleted_at IS NULL;
CREATE INDEX videos_project_mode_created ON videos (project_id, livemode, created_at DESC, id DESC)
  WHERE deleted_at IS NULL;
CREATE INDEX videos_test_expiry ON videos (created_at, id) WHERE livemode = 0 AND deleted_at IS NULL;
-- The sweeper's look-up of imports whose fetch stopped (a lost queue message, a lease run out).
CREATE INDEX videos_importing ON videos (import_lease_until) WHERE status = 'importing' AND deleted_at IS NULL;
-- The clips sharing a source: whether a source object is still needed by a clip not cleaned up.
CREATE INDEX videos_clip_sources ON videos (source_key) WHERE clip_of IS NOT NULL AND storage_cleared_at IS NULL;

CREATE TRIGGER video_titles_insert AFTER INSERT ON videos WHEN new.title IS NOT NULL BEGIN
  INSERT INTO video_titles (rowid, title) VALUES (new.rowid, new.title);
END;
CREATE TRIGGER video_titles_update AFTER UPDATE OF title ON videos WHEN new.title IS NOT old.title BEGIN
  DELETE FROM video_titles WHERE rowid = old.rowid;
  INSERT INTO video_titles (rowid, title) SELECT new.rowid, new.title WHERE new.title IS NOT NULL;
END;
CREATE TRIGGER video_titles_delete AFTER DELETE ON videos BEGIN
  DELETE FROM video_titles WHERE rowid = old.rowid;
END;
