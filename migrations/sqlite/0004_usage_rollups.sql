-- Usage at scale: counters per account and reseller client, per hour and per
-- UTC day, per endpoint and category, billable or not, maintained by the
-- usage writer in the transaction that writes the raw rows; monthly billable
-- totals kept for good. Raw rows (usage_events) are kept only for recent
-- activity: the newest few per account (usage_recent_requests).
-- client_id is the reseller client, 0 for the account's own keys.

CREATE TABLE usage_rollups (
    account_id BIGINT NOT NULL,
    grain TEXT NOT NULL,
    bucket BIGINT NOT NULL,
    client_id BIGINT NOT NULL,
    endpoint TEXT NOT NULL,
    category TEXT NOT NULL,
    billable BIGINT NOT NULL,
    requests BIGINT NOT NULL,
    PRIMARY KEY (account_id, grain, bucket, client_id, endpoint, category, billable)
);
CREATE INDEX usage_rollups_client ON usage_rollups(client_id, grain, bucket);
CREATE INDEX usage_rollups_age ON usage_rollups(grain, bucket);

CREATE TABLE usage_monthly_totals (
    account_id BIGINT NOT NULL,
    client_id BIGINT NOT NULL,
    month TEXT NOT NULL,
    billable_requests BIGINT NOT NULL,
    PRIMARY KEY (account_id, client_id, month)
);

-- Recent activity reads and prunes raw rows by account in id order.
CREATE INDEX usage_events_account_id ON usage_events(account_id, id);

-- Backfill from the raw rows recorded so far.
INSERT INTO usage_rollups (account_id, grain, bucket, client_id, endpoint, category, billable, requests)
SELECT account_id, 'hour', ts - ts % 3600000, COALESCE(reseller_client_id, 0), endpoint, category, billable, COUNT(*)
FROM usage_events GROUP BY account_id, ts - ts % 3600000, COALESCE(reseller_client_id, 0), endpoint, category, billable;

INSERT INTO usage_rollups (account_id, grain, bucket, client_id, endpoint, category, billable, requests)
SELECT account_id, 'day', ts - ts % 86400000, COALESCE(reseller_client_id, 0), endpoint, category, billable, COUNT(*)
FROM usage_events GROUP BY account_id, ts - ts % 86400000, COALESCE(reseller_client_id, 0), endpoint, category, billable;

INSERT INTO usage_monthly_totals (account_id, client_id, month, billable_requests)
SELECT account_id, COALESCE(reseller_client_id, 0), strftime('%Y-%m', ts / 1000, 'unixepoch'), COUNT(*)
FROM usage_events WHERE billable = 1
GROUP BY account_id, COALESCE(reseller_client_id, 0), strftime('%Y-%m', ts / 1000, 'unixepoch');

-- Limits shared by every server on one PostgreSQL database (unused on
-- SQLite, where a single process enforces them in memory): servers reserve
-- budget from these rows in blocks, and one request at a time near a limit.
-- scope names the limit and its subject ("minute:key:42", "quota:account:7").
CREATE TABLE limit_windows (
    scope TEXT NOT NULL,
    window_start BIGINT NOT NULL,
    used BIGINT NOT NULL,
    burst_started BIGINT,
    -- The size of the last reservation, returned by the one-statement path.
    last_grant BIGINT NOT NULL DEFAULT 0,
    PRIMARY KEY (scope, window_start)
);
CREATE INDEX limit_windows_age ON limit_windows(window_start);
