-- Audio in other languages (docs/audio-tracks.md): a video's added audio tracks, one per language
-- (a BCP 47 tag in its canonical case), with the label players show. Each PUT of a language is a
-- new `generation` (a ULID) whose objects all live under the video's prefix at
-- `audio/<generation>/` (its file as sent, `source`, and its segments), so a replaced track's
-- objects go as one prefix and its URLs never serve another PUT's bytes. A track is `processing`
-- until every segment is stored, then `ready`, or `errored` with its error. A deleted video's rows
-- go with its storage clean-up, a deleted project's with its purge.
--
-- A track put by URL is fetched first by the imports' machinery (docs/imports.md), whose state it
-- keeps as an importing video does (`import_url` until the file is whole, then null; its parts in
-- `upload_parts` under the generation); a fetch that fails for good errors it `import_failed`.
CREATE TABLE audio_tracks (
  project_id TEXT NOT NULL,
  video_id TEXT NOT NULL,
  language TEXT NOT NULL CHECK (length(language) BETWEEN 2 AND 35),
  label TEXT NOT NULL CHECK (length(label) BETWEEN 1 AND 100),
  generation TEXT NOT NULL,
  source_key TEXT NOT NULL,
  status TEXT NOT NULL CHECK (status IN ('processing', 'ready', 'errored')),
  error_code TEXT CHECK (error_code IN ('invalid_source', 'encoding_failed', 'import_failed')),
  error_message TEXT,
  import_url TEXT,
  import_validator TEXT,
  import_lease_until TEXT,
  import_failures INTEGER NOT NULL DEFAULT 0,
  upload_r2_id TEXT,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  PRIMARY KEY (video_id, language)
);
CREATE INDEX audio_tracks_project ON audio_tracks (project_id);
CREATE UNIQUE INDEX audio_tracks_generation ON audio_tracks (generation);
CREATE INDEX audio_tracks_importing ON audio_tracks (import_lease_until) WHERE import_url IS NOT NULL;

-- The language the source's own audio stream is tagged with (BCP 47), kept when the video becomes
-- playable; null when it names none, or the video was made before this (the API says `und`).
ALTER TABLE videos ADD COLUMN audio_language TEXT;
