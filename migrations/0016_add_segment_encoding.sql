-- Segment-by-segment encoding (docs/encoding.md#long-videos-playable-in-seconds): a video is
-- playable while it is processing, from the encoding plan its coordinator made after the probe
-- (encoder/plan.mjs, as JSON): the playlists are served from it before any segment exists. Videos
-- encoded before keep their outputs under encodes/{output_attempt}/ and have no plan.
ALTER TABLE videos ADD COLUMN encode_plan TEXT;
ALTER TABLE videos ADD COLUMN playable_at TEXT;
