-- The operator's account list, newest first, whole or by approval (GET /v1/admin/accounts): one
-- index seek per page however many accounts there are.
CREATE INDEX accounts_created ON accounts (created_at DESC, id DESC);
CREATE INDEX accounts_approved_created ON accounts (approved, created_at DESC, id DESC);
