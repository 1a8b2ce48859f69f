-- The parts an upload was completed with, so that a repeated completion (a client retrying after a
-- lost answer) is recognised: the same parts answer the video again, other parts are refused.
ALTER TABLE videos ADD COLUMN completed_parts TEXT;
