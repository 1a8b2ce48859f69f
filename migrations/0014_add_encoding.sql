-- Encoding (docs/encoding.md#what-it-promises): a video goes on from `uploaded` to `processing`,
-- then `ready` or `errored`. SQLite cannot change a CHECK in place, so the table is rebuilt with
-- the new statuses and the encoding columns; no table references videos, so nothing cascades.
CREATE TABLE videos_new (
  id TEXT PRIMARY KEY,
  project_id TEXT NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
  title TEXT,
  status TEXT NOT NULL CHECK (status IN ('waiting_for_upload', 'upload_completing', 'uploaded', 'processing', 'ready', 'errored')),
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
  -- The source as probed: seconds and display size.
  duration REAL,
  width INTEGER,
  height INTEGER,
  -- Once `ready`: the renditions (JSON), the attempt whose outputs are served, and whether it made an MP4.
  renditions TEXT,
  output_attempt INTEGER,
  has_mp4 INTEGER,
  -- Once `errored`: why.
  error_code TEXT CHECK (error_code IN ('invalid_source', 'encoding_failed')),
  error_message TEXT,
  -- On a deleted video: when everything it stored in R2 was removed (null while anything may remain).
  storage_cleared_at TEXT
);

-- A video deleted before this migration had only its upload and custom thumbnail cleaned up; its
-- source may remain, so none counts as cleared: the sweeper removes what is left under its prefix.
INSERT INTO videos_new (id, project_id, title, status, visibility, source_key, upload_id, upload_r2_id,
  upload_expires_at, completion_lease_until, created_at, updated_at, deleted_at, custom_thumbnail_key,
  completed_parts)
SELECT id, project_id, title, status, visibility, source_key, upload_id, upload_r2_id, upload_expires_at,
  completion_lease_until, created_at, updated_at, deleted_at, custom_thumbnail_key, completed_parts
FROM videos;

DROP TABLE videos;
ALTER TABLE videos_new RENAME TO videos;

CREATE INDEX videos_project_created ON videos (project_id, created_at DESC, id DESC) WHERE deleted_at IS NULL;
CREATE INDEX videos_open_uploads ON videos (upload_expires_at) WHERE upload_r2_id IS NOT NULL AND deleted_at IS NULL;
CREATE INDEX videos_project ON videos (project_id);
-- The sweeper's look-up of deleted videos whose R2 objects are not all removed yet.
CREATE INDEX videos_pending_cleanup ON videos (deleted_at) WHERE deleted_at IS NOT NULL AND storage_cleared_at IS NULL;
-- The sweeper's look-up of encodings to start again (a lost queue message) or take over (a silent encoder).
CREATE INDEX videos_encoding ON videos (status) WHERE status IN ('uploaded', 'processing') AND deleted_at IS NULL;

-- An endpoint created without eventTypes receives every type, including the two added here
-- (docs/webhooks.md). Until now such an endpoint was stored with the one type there was; it is
-- stored as "every type" now. (An endpoint that named ["video.deleted"] explicitly cannot be told
-- apart from those: it receives the new types too, and can narrow its eventTypes with a PATCH.)
UPDATE webhook_endpoints SET event_types = '"*"' WHERE event_types = '["video.deleted"]';
