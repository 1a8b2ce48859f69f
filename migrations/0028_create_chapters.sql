-- A video's chapters (docs/chapters.md): one row per video that has any, the list as JSON
-- (`[{"start": <seconds>, "title": "…"}]`, 1 to 100 chapters, starts strictly increasing from 0),
-- replaced whole by each PUT. A deleted video's row goes with its storage clean-up, a deleted
-- project's with its purge.
CREATE TABLE chapters (
  video_id TEXT PRIMARY KEY,
  project_id TEXT NOT NULL,
  chapters TEXT NOT NULL CHECK (json_valid(chapters) AND json_array_length(chapters) BETWEEN 1 AND 100),
  updated_at TEXT NOT NULL
);
CREATE INDEX chapters_project ON chapters (project_id);
