-- Idempotency-Key (docs/api-guide.md#retrying-safely): one row per key a caller used on a method
-- and target, kept 24 h. `state` is 'running' while the first request runs (its claim lapses at
-- `locked_until`, so a request that died does not hold the key forever), then 'done' with the
-- stored answer, encrypted.
CREATE TABLE idempotency_keys (
  scope TEXT NOT NULL,
  method TEXT NOT NULL,
  target TEXT NOT NULL,
  key TEXT NOT NULL,
  body_hash TEXT NOT NULL,
  state TEXT NOT NULL CHECK (state IN ('running', 'done')),
  locked_until TEXT,
  response TEXT,
  created_at TEXT NOT NULL,
  PRIMARY KEY (scope, method, target, key)
);
CREATE INDEX idempotency_keys_created ON idempotency_keys (created_at);
