-- Direct uploads (tus, docs/api-guide.md#direct-uploads-from-a-browser-tus). A row is what POST
-- /v1/uploads minted: the one video it uploads, the browser origin its URL answers CORS for, its
-- size limit and expiry. Its progress (offset, length, parts) lives in the upload's Durable Object
-- (TusUpload), which serialises it.
CREATE TABLE tus_uploads (
  id TEXT PRIMARY KEY,
  project_id TEXT NOT NULL,
  video_id TEXT NOT NULL UNIQUE,
  cors_origin TEXT NOT NULL,
  max_size_bytes INTEGER NOT NULL CHECK (max_size_bytes >= 1),
  expires_at TEXT NOT NULL,
  created_at TEXT NOT NULL
);
CREATE INDEX tus_uploads_project ON tus_uploads (project_id);

-- The tus upload that owns a video's multipart upload (null for the part API's uploads). Kept after
-- the video is completed or deleted, so its clean-up can reach the upload's Durable Object.
ALTER TABLE videos ADD COLUMN tus_upload_id TEXT;
