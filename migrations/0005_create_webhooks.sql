-- Webhook endpoints and their delivery attempts.

CREATE TABLE webhook_endpoints (
  id TEXT PRIMARY KEY,
  project_id TEXT NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
  url TEXT NOT NULL,
  -- JSON array of subscribed event types.
  event_types TEXT NOT NULL CHECK (json_valid(event_types)),
  enabled INTEGER NOT NULL DEFAULT 1 CHECK (enabled IN (0, 1)),
  description TEXT,
  -- whsec_<base64>: kept as is, since every delivery is signed with it.
  secret TEXT NOT NULL,
  created_at TEXT NOT NULL
);
CREATE INDEX webhook_endpoints_project ON webhook_endpoints (project_id, created_at DESC, id DESC);

-- One row per attempt of an event to an endpoint, written before its queue message is sent.
CREATE TABLE webhook_deliveries (
  id TEXT PRIMARY KEY,
  endpoint_id TEXT NOT NULL REFERENCES webhook_endpoints (id) ON DELETE CASCADE,
  event_id TEXT NOT NULL REFERENCES outbox_events (id),
  event_type TEXT NOT NULL,
  state TEXT NOT NULL CHECK (state IN ('pending', 'succeeded', 'failed')),
  attempt INTEGER NOT NULL CHECK (attempt >= 1),
  response_status INTEGER,
  error TEXT,
  duration_ms INTEGER,
  created_at TEXT NOT NULL,
  completed_at TEXT,
  next_retry_at TEXT
);
-- An event's attempt N to an endpoint exists once, however often it is published.
CREATE UNIQUE INDEX webhook_deliveries_attempt ON webhook_deliveries (endpoint_id, event_id, attempt);
CREATE INDEX webhook_deliveries_list ON webhook_deliveries (endpoint_id, created_at DESC, id DESC);
CREATE INDEX webhook_deliveries_pending ON webhook_deliveries (created_at) WHERE state = 'pending';

-- When a pending attempt is due, and until when a consumer holds it (so a duplicate message never
-- sends it twice at once). Internal: not part of the delivery attempt object.
ALTER TABLE webhook_deliveries ADD COLUMN due_at TEXT NOT NULL DEFAULT '';
ALTER TABLE webhook_deliveries ADD COLUMN claimed_until TEXT;
