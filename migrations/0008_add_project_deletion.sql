-- Project deletion. A deleted project is gone at once for every read path (they all require
-- deleted_at IS NULL); the purge then removes what it stored, in bounded batches, the row last.
ALTER TABLE projects ADD COLUMN deleted_at TEXT;
-- The sweeper's look-up of deleted projects whose purge is not finished.
CREATE INDEX projects_deleted ON projects (deleted_at) WHERE deleted_at IS NOT NULL;
-- The purge's look-ups by project: every video (videos_project_created holds live ones only) and
-- every outbox event. They also serve the foreign key checks when the project row is deleted.
CREATE INDEX videos_project ON videos (project_id);
CREATE INDEX outbox_events_project ON outbox_events (project_id);
