-- Outbound webhooks (spec/2 "Webhooks"): subscriptions, one delivery row per
-- (event, subscription) written in the transaction that marks the outbox
-- row dispatched, and every attempt of every delivery.

CREATE TABLE webhooks (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    account_id BIGINT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
    name TEXT,
    url TEXT NOT NULL,
    -- JSON array of canonical event names, or ["*"].
    events TEXT NOT NULL,
    -- The signing secret, sealed with the row id as associated data.
    secret TEXT NOT NULL,
    is_active BIGINT NOT NULL DEFAULT 1,
    -- First failed attempt since the last success; five days of failing
    -- disables the subscription.
    failing_since BIGINT,
    disabled_reason TEXT,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL
);
CREATE INDEX webhooks_account ON webhooks(account_id, id);

CREATE TABLE webhook_deliveries (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    account_id BIGINT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
    webhook_id BIGINT NOT NULL REFERENCES webhooks(id) ON DELETE CASCADE,
    -- The outbox event; NULL for test deliveries.
    event_id BIGINT,
    event_type TEXT NOT NULL,
    url TEXT NOT NULL,
    -- The exact body sent on every attempt, so retries carry the same bytes.
    payload TEXT NOT NULL,
    -- pending, retrying, delivered, failed
    status TEXT NOT NULL,
    attempt BIGINT NOT NULL DEFAULT 0,
    -- Due time while pending or retrying, NULL once delivered or failed.
    next_attempt_at BIGINT,
    lease_owner TEXT,
    lease_until BIGINT,
    status_code BIGINT,
    response_ms BIGINT,
    error TEXT,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL,
    delivered_at BIGINT
);
-- Fan-out writes each (event, subscription) once, whatever crashes.
CREATE UNIQUE INDEX webhook_deliveries_event ON webhook_deliveries(event_id, webhook_id);
CREATE INDEX webhook_deliveries_due ON webhook_deliveries(next_attempt_at) WHERE next_attempt_at IS NOT NULL;
CREATE INDEX webhook_deliveries_account ON webhook_deliveries(account_id, id);
CREATE INDEX webhook_deliveries_webhook ON webhook_deliveries(webhook_id, id);

CREATE TABLE webhook_attempts (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    delivery_id BIGINT NOT NULL REFERENCES webhook_deliveries(id) ON DELETE CASCADE,
    attempt BIGINT NOT NULL,
    attempted_at BIGINT NOT NULL,
    status_code BIGINT,
    response_ms BIGINT NOT NULL,
    response_excerpt TEXT,
    error TEXT
);
CREATE INDEX webhook_attempts_delivery ON webhook_attempts(delivery_id, attempt);
