-- Videos, their upload sessions, and the transactional outbox of events.

CREATE TABLE videos (
  id TEXT PRIMARY KEY,
  project_id TEXT NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
  title TEXT,
  status TEXT NOT NULL CHECK (status IN ('waiting_for_upload', 'upload_completing', 'uploaded')),
  visibility TEXT NOT NULL DEFAULT 'public' CHECK (visibility IN ('public', 'unlisted', 'private')),
  -- R2 key of the uploaded source.
  source_key TEXT NOT NULL,
  -- The upload session: our id for it, R2's multipart upload id, and when it expires.
  -- upload_r2_id stays set on a deleted video until its multipart upload has been aborted.
  upload_id TEXT,
  upload_r2_id TEXT,
  upload_expires_at TEXT,
  -- While in the future, an upload completion is in flight; it is a lease, so a completion that
  -- dies releases the video when it expires.
  completion_lease_until TEXT,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  deleted_at TEXT
);
-- Listing a project's live videos, newest first, by keyset.
CREATE INDEX videos_project_created ON videos (project_id, created_at DESC, id DESC) WHERE deleted_at IS NULL;
-- The sweeper's look-up of deleted videos whose multipart upload still needs aborting.
CREATE INDEX videos_pending_abort ON videos (deleted_at) WHERE deleted_at IS NOT NULL AND upload_r2_id IS NOT NULL;

-- Events are written in the same batch as the change they describe, so none is ever lost between
-- the database and the queue; a publisher moves them on and sets published_at.
CREATE TABLE outbox_events (
  id TEXT PRIMARY KEY,
  project_id TEXT NOT NULL,
  type TEXT NOT NULL,
  -- The resource the event is about (a video id for video.deleted).
  subject_id TEXT NOT NULL,
  -- The event body as delivered: {"type", "timestamp", "data"}.
  payload TEXT NOT NULL,
  created_at TEXT NOT NULL,
  published_at TEXT
);
-- A video is deleted once, so it has one video.deleted event, however deletes race.
CREATE UNIQUE INDEX outbox_events_subject ON outbox_events (type, subject_id);
CREATE INDEX outbox_events_unpublished ON outbox_events (created_at) WHERE published_at IS NULL;
