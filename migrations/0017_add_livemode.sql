-- Test mode (docs/api-guide.md#test-mode-and-going-live): every video (with its tus upload and its
-- events) and every webhook endpoint belongs to one mode, the mode of the API key that created it:
-- 1 live, 0 test. Everything made before test mode existed is live. Queries that act for a caller
-- bind the mode next to the project id (src/lib/tenant.ts); the encoder caps a test video at its
-- first 10 s.
ALTER TABLE videos ADD COLUMN livemode INTEGER NOT NULL DEFAULT 1 CHECK (livemode IN (0, 1));
ALTER TABLE tus_uploads ADD COLUMN livemode INTEGER NOT NULL DEFAULT 1 CHECK (livemode IN (0, 1));
ALTER TABLE webhook_endpoints ADD COLUMN livemode INTEGER NOT NULL DEFAULT 1 CHECK (livemode IN (0, 1));
-- An event's mode is its video's: the subscriber gives it to that mode's endpoints only.
ALTER TABLE outbox_events ADD COLUMN livemode INTEGER NOT NULL DEFAULT 1 CHECK (livemode IN (0, 1));

-- An API key lists its own mode's live videos, newest first, by keyset: one seek on this index
-- (a session cookie that does not narrow keeps using videos_project_created).
CREATE INDEX videos_project_mode_created ON videos (project_id, livemode, created_at DESC, id DESC)
  WHERE deleted_at IS NULL;
-- The scheduled sweep's look-up of test videos to delete 24 hours after their creation.
CREATE INDEX videos_test_expiry ON videos (created_at, id) WHERE livemode = 0 AND deleted_at IS NULL;
