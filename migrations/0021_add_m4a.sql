-- The video's M4A (docs/audio-only.md): 1 once its audio-only file is stored (a
-- ready video whose source has audio), 0 for a ready silent video, NULL until ready and for
-- videos encoded before it existed (no M4A).
ALTER TABLE videos ADD COLUMN has_m4a INTEGER;
