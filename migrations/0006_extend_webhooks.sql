-- Endpoint management (PATCH, rotate-secret, 410 Gone), attempt error categories, and indexes that
-- make every deliveries page one index seek, at any depth and under any filter.

-- Why an endpoint is disabled: 'gone' (it answered 410) or 'manual' (PATCH enabled=false).
ALTER TABLE webhook_endpoints ADD COLUMN disabled_reason TEXT CHECK (disabled_reason IN ('gone', 'manual'));
UPDATE webhook_endpoints SET disabled_reason = 'manual' WHERE enabled = 0;
-- After a rotation, the old secret also signs deliveries until previous_secret_until.
ALTER TABLE webhook_endpoints ADD COLUMN previous_secret TEXT;
ALTER TABLE webhook_endpoints ADD COLUMN previous_secret_until TEXT;

-- Attempt errors are categories now; the raw reason goes to the log only.
UPDATE webhook_deliveries
SET error = CASE
  WHEN response_status IS NOT NULL THEN 'http_status'
  WHEN error LIKE 'no answer%' THEN 'timeout'
  ELSE 'connection_failed'
END
WHERE error IS NOT NULL;

-- The listing's filters, each in the listing order (created_at, id descending), so a page is a seek.
CREATE INDEX webhook_deliveries_list_state ON webhook_deliveries (endpoint_id, state, created_at DESC, id DESC);
CREATE INDEX webhook_deliveries_list_type ON webhook_deliveries (endpoint_id, event_type, created_at DESC, id DESC);
CREATE INDEX webhook_deliveries_list_state_type
  ON webhook_deliveries (endpoint_id, state, event_type, created_at DESC, id DESC);

-- The sweeper's reads: pending attempts by due time, and what is past retention.
DROP INDEX webhook_deliveries_pending;
CREATE INDEX webhook_deliveries_pending ON webhook_deliveries (due_at) WHERE state = 'pending';
CREATE INDEX webhook_deliveries_created ON webhook_deliveries (created_at);
CREATE INDEX webhook_deliveries_event ON webhook_deliveries (event_id);
CREATE INDEX outbox_events_published ON outbox_events (published_at) WHERE published_at IS NOT NULL;
