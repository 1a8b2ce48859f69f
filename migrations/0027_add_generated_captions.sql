-- Captions generated from the speech (docs/generated-captions.md).
--
-- A track now has a status: an uploaded one is `ready`; a generated one is `processing` until the
-- speech is heard, then `ready`, `errored` (with its error) or `skipped` (no audio, no speech). A
-- generated track asked for again gets a new `generation`: what an older one heard is then let go,
-- never written over the newer one. A track being made has no WebVTT yet: `object_key` is ''.
ALTER TABLE captions ADD COLUMN status TEXT NOT NULL DEFAULT 'ready'
  CHECK (status IN ('processing', 'ready', 'errored', 'skipped'));
ALTER TABLE captions ADD COLUMN generation TEXT;
ALTER TABLE captions ADD COLUMN error_code TEXT CHECK (error_code IN ('transcription_failed'));
ALTER TABLE captions ADD COLUMN error_message TEXT;

-- The languages `POST /v1/videos` asked to be generated once the video is playable (JSON list), or null.
ALTER TABLE videos ADD COLUMN generated_captions TEXT;

-- An event was unique per type and video: a video becomes ready once. A caption event happens once
-- per track made (`occurrence`: its generation), so a video may have many of one type.
ALTER TABLE outbox_events ADD COLUMN occurrence TEXT NOT NULL DEFAULT '';
DROP INDEX outbox_events_subject;
CREATE UNIQUE INDEX outbox_events_subject ON outbox_events (project_id, type, subject_id, occurrence);
