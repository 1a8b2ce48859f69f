-- Each project's encoding settings, stored as the full effective document (defaults merged in),
-- so that changing the defaults in code never silently changes an existing project: that would
-- take a migration like this one.

CREATE TABLE encoding_settings (
  project_id TEXT PRIMARY KEY REFERENCES projects (id) ON DELETE CASCADE,
  -- {"enabledResolutions", "mp4FallbackEnabled", "outputCodecs", "watermark": {...}}
  document TEXT NOT NULL CHECK (json_valid(document)),
  -- Bumped by every change; the ETag of the settings.
  version INTEGER NOT NULL DEFAULT 1,
  updated_at TEXT NOT NULL
);

-- Projects created before this migration get the defaults of this release (src/encoding/settings.ts).
INSERT INTO encoding_settings (project_id, document, version, updated_at)
SELECT id,
       '{"enabledResolutions":["360p","720p","1080p"],"mp4FallbackEnabled":false,"outputCodecs":["h264"],"watermark":{"enabled":false,"position":"top-right","opacity":1,"imageKey":null}}',
       1,
       created_at
FROM projects;
