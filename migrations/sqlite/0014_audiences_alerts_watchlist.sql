-- Audiences, alert rules and the watchlist (issue 28), and what their
-- evaluation reads: a narrow facet row per matchable pool record and the
-- pool's internal change events.

-- A record's revision grows with every save of its facts, so a reader of
-- two saves of one domain can tell which came later.
ALTER TABLE domains ADD COLUMN revision BIGINT NOT NULL DEFAULT 0;

-- What audience and alert filters read, one row per record that carries
-- facts (enriched, or imported with fields). industry is lower case;
-- country is the registrant's, else the server's; confidence is a whole
-- percent; signal_bits holds the audience signals in bits 0-20 and the
-- alert signals in bits 21-34 (audiences::filters, alerts::filters).
CREATE TABLE pool_facets (
    domain_id BIGINT PRIMARY KEY REFERENCES domains(id) ON DELETE CASCADE,
    industry TEXT,
    country TEXT,
    business_type TEXT NOT NULL,
    confidence BIGINT NOT NULL,
    intent_score BIGINT NOT NULL,
    signal_bits BIGINT NOT NULL,
    seen_at BIGINT NOT NULL
);
-- Covering indexes: a filter naming industries or countries counts from
-- one of these without touching the table.
CREATE INDEX pool_facets_industry ON pool_facets(industry, country, confidence, intent_score, signal_bits, business_type);
CREATE INDEX pool_facets_country ON pool_facets(country, industry, confidence, intent_score, signal_bits, business_type);
CREATE INDEX pool_facets_seen ON pool_facets(seen_at);

-- One row per save of a record's facts, written in the save's
-- transaction; the evaluation worker deletes the rows it consumes in the
-- transaction that records their matches. data: {domain, revision,
-- before, after, monitored, level, likely_buys, alert_signals}.
CREATE TABLE pool_events (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    domain_id BIGINT NOT NULL,
    data TEXT NOT NULL,
    created_at BIGINT NOT NULL
);

CREATE TABLE audiences (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    account_id BIGINT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
    name TEXT NOT NULL,
    description TEXT NOT NULL DEFAULT '',
    filters TEXT NOT NULL,
    match_count BIGINT NOT NULL DEFAULT 0,
    new_since_viewed BIGINT NOT NULL DEFAULT 0,
    is_active BIGINT NOT NULL DEFAULT 1,
    -- The last pool event already reflected in match_count when it was
    -- counted; the worker applies only later ones.
    counted_through BIGINT NOT NULL DEFAULT 0,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL
);
CREATE INDEX audiences_account ON audiences(account_id, id);
CREATE INDEX audiences_active ON audiences(is_active, id);

CREATE TABLE alert_rules (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    account_id BIGINT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
    name TEXT NOT NULL,
    filters TEXT NOT NULL,
    via_email BIGINT NOT NULL DEFAULT 1,
    via_slack BIGINT NOT NULL DEFAULT 0,
    via_in_app BIGINT NOT NULL DEFAULT 1,
    -- Sealed (secrets), NULL when none.
    slack_webhook_url TEXT,
    is_active BIGINT NOT NULL DEFAULT 1,
    last_triggered_at BIGINT,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL
);
CREATE INDEX alert_rules_account ON alert_rules(account_id, id);
CREATE INDEX alert_rules_active ON alert_rules(is_active, id);

-- History outlives its rule (alert_name is kept), so no foreign key.
CREATE TABLE alert_history (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    account_id BIGINT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
    alert_id BIGINT NOT NULL,
    alert_name TEXT NOT NULL,
    matched_domains TEXT NOT NULL,
    in_app BIGINT NOT NULL,
    -- 1 once delivered; 0 while pending, failed or not asked for.
    delivered_email BIGINT NOT NULL DEFAULT 0,
    delivered_slack BIGINT NOT NULL DEFAULT 0,
    created_at BIGINT NOT NULL
);
CREATE INDEX alert_history_account ON alert_history(account_id, id);
CREATE INDEX alert_history_alert ON alert_history(account_id, alert_id, id);

CREATE TABLE watched_domains (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    account_id BIGINT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
    domain_id BIGINT NOT NULL REFERENCES domains(id) ON DELETE CASCADE,
    domain TEXT NOT NULL,
    -- {industry, sub_industry, website_email, summary, is_trusted,
    -- confidence}; NULL until the record first has facts.
    snapshot TEXT,
    snapshot_revision BIGINT NOT NULL DEFAULT 0,
    alert_on_industry_change BIGINT NOT NULL DEFAULT 1,
    alert_on_email_change BIGINT NOT NULL DEFAULT 1,
    alert_on_tech_change BIGINT NOT NULL DEFAULT 1,
    alert_on_status_change BIGINT NOT NULL DEFAULT 1,
    total_changes BIGINT NOT NULL DEFAULT 0,
    last_checked_at BIGINT,
    last_changed_at BIGINT,
    next_check_at BIGINT NOT NULL,
    created_at BIGINT NOT NULL
);
CREATE UNIQUE INDEX watched_domains_unique ON watched_domains(account_id, domain_id);
CREATE INDEX watched_domains_domain ON watched_domains(domain_id);
CREATE INDEX watched_domains_due ON watched_domains(next_check_at);

CREATE TABLE watch_changes (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    account_id BIGINT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
    watchlist_id BIGINT NOT NULL REFERENCES watched_domains(id) ON DELETE CASCADE,
    field_changed TEXT NOT NULL,
    old_value TEXT,
    new_value TEXT,
    detected_at BIGINT NOT NULL
);
CREATE INDEX watch_changes_watch ON watch_changes(watchlist_id, id);
CREATE INDEX watch_changes_account ON watch_changes(account_id, id);

-- Records that already carry facts get their facet rows when the server
-- starts (domains::facets::backfill).
