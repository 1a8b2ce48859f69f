-- What the scheduled handler looks for: expired sessions to purge, and expired upload sessions
-- whose R2 multipart upload is still open.
CREATE INDEX sessions_expires ON sessions (expires_at);
CREATE INDEX videos_open_uploads ON videos (upload_expires_at) WHERE upload_r2_id IS NOT NULL AND deleted_at IS NULL;
