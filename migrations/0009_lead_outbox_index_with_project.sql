-- Per-project lookups lead with project_id, so a project's rows can be found (and moved to a
-- database of its own) by one index range. An event's subject belongs to one project, so the
-- uniqueness of (type, subject) is unchanged.
DROP INDEX outbox_events_subject;
CREATE UNIQUE INDEX outbox_events_subject ON outbox_events (project_id, type, subject_id);
