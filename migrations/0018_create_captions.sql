-- Caption tracks (docs/captions-and-embed.md): one per video and language (a BCP 47 tag in its canonical
-- case), its label, where it came from ('upload'; 'generated' is kept for machine captions), and
-- the R2 object holding its WebVTT (under the video's prefix, a new name per upload). A deleted
-- video's rows go with its storage clean-up, a deleted project's with its purge.
CREATE TABLE captions (
  project_id TEXT NOT NULL,
  video_id TEXT NOT NULL,
  language TEXT NOT NULL CHECK (length(language) BETWEEN 2 AND 35),
  label TEXT NOT NULL CHECK (length(label) BETWEEN 1 AND 100),
  source TEXT NOT NULL CHECK (source IN ('upload', 'generated')),
  object_key TEXT NOT NULL,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  PRIMARY KEY (video_id, language)
);
CREATE INDEX captions_project ON captions (project_id);
