-- Tags, metadata and title search (docs/import-clips-search.md): a video's tags, metadata and
-- allowed origins, and the index of its title words that `GET /v1/videos?search=` matches.

-- JSON: an array of strings; an object of string pairs; an array of origin patterns ([] = any).
ALTER TABLE videos ADD COLUMN tags TEXT NOT NULL DEFAULT '[]';
ALTER TABLE videos ADD COLUMN metadata TEXT NOT NULL DEFAULT '{}';
ALTER TABLE videos ADD COLUMN allowed_origins TEXT NOT NULL DEFAULT '[]';

-- The title's words, case- and accent-folded (remove_diacritics 2 also folds letters with several
-- marks), for prefix queries; a row's rowid is its video's rowid, and the triggers keep the two in
-- step on every path that writes a title (the part API, tus, PATCH, purges). A migration that
-- rebuilds videos must keep its rowids (INSERT … (rowid, …) SELECT rowid, …) and recreate these
-- triggers.
CREATE VIRTUAL TABLE video_titles USING fts5(title, tokenize = 'unicode61 remove_diacritics 2');
INSERT INTO video_titles (rowid, title) SELECT rowid, title FROM videos WHERE title IS NOT NULL;

CREATE TRIGGER video_titles_insert AFTER INSERT ON videos WHEN new.title IS NOT NULL BEGIN
  INSERT INTO video_titles (rowid, title) VALUES (new.rowid, new.title);
END;
CREATE TRIGGER video_titles_update AFTER UPDATE OF title ON videos WHEN new.title IS NOT old.title BEGIN
  DELETE FROM video_titles WHERE rowid = old.rowid;
  INSERT INTO video_titles (rowid, title) SELECT new.rowid, new.title WHERE new.title IS NOT NULL;
END;
CREATE TRIGGER video_titles_delete AFTER DELETE ON videos BEGIN
  DELETE FROM video_titles WHERE rowid = old.rowid;
END;
