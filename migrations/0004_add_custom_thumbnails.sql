-- A video's custom thumbnail, kept apart from the automatic poster frame (which the encoding
-- pipeline writes to its own R2 key), so an encode retry never replaces a custom image.
-- On a deleted video the key stays set until the object has been deleted from R2.
ALTER TABLE videos ADD COLUMN custom_thumbnail_key TEXT;

DROP INDEX videos_pending_abort;
-- The sweeper's look-up of deleted videos that still have R2 objects or uploads to clean up.
CREATE INDEX videos_pending_cleanup ON videos (deleted_at)
  WHERE deleted_at IS NOT NULL AND (upload_r2_id IS NOT NULL OR custom_thumbnail_key IS NOT NULL);
