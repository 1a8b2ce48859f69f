-- Every part stored in a video's R2 multipart upload, with its size: a completion is checked
-- against R2's rule (every part but the last one size, at least 5 MiB) before R2 is asked, so the
-- client learns which part is at fault (400 invalid_parts) and the upload stays open.
CREATE TABLE upload_parts (
  project_id TEXT NOT NULL,
  video_id TEXT NOT NULL,
  part_number INTEGER NOT NULL CHECK (part_number BETWEEN 1 AND 10000),
  size INTEGER NOT NULL CHECK (size >= 0),
  etag TEXT NOT NULL,
  uploaded_at TEXT NOT NULL,
  PRIMARY KEY (project_id, video_id, part_number)
);
