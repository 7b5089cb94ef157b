-- The domain pool (issue 11): one enriched record per company domain,
-- global to the installation (not per account), with its search tags, its
-- change history and the accounts that asked for its enrichment.

-- One record per registrable domain (outreach_domain_analysis::domain::
-- normalise). ARCHITECTURE.md "Domain pool" gives each field's meaning and
-- source. JSON columns are TEXT on both backends.
CREATE TABLE domains (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    domain TEXT NOT NULL,
    -- queued, enriching, enriched, failed (every stage failed)
    status TEXT NOT NULL DEFAULT 'queued',
    company_name TEXT,
    summary TEXT,
    industry TEXT,
    sub_industry TEXT,
    -- B2B, B2C, B2B2C, marketplace, non-profit, government, unknown
    business_type TEXT NOT NULL DEFAULT 'unknown',
    confidence REAL NOT NULL DEFAULT 0,
    website_email TEXT,
    -- E.164
    phone TEXT,
    employees_range TEXT,
    -- [{name, categories, version, confidence}]
    technologies TEXT NOT NULL DEFAULT '[]',
    -- spec/2's two signal sets, each a JSON array of names
    alert_signals TEXT NOT NULL DEFAULT '[]',
    audience_signals TEXT NOT NULL DEFAULT '[]',
    intent_score BIGINT NOT NULL DEFAULT 0,
    -- hot, warm, neutral, cold
    intent_level TEXT NOT NULL DEFAULT 'cold',
    likely_buys TEXT NOT NULL DEFAULT '[]',
    gaps TEXT NOT NULL DEFAULT '[]',
    registrant_country TEXT,
    ip_country TEXT,
    city TEXT,
    registered_at BIGINT,
    language TEXT,
    -- {linkedin, twitter, facebook, instagram, youtube, github, tiktok}
    social_links TEXT NOT NULL DEFAULT '{}',
    mx_provider TEXT,
    has_spf BIGINT,
    has_dmarc BIGINT,
    -- Addresses seen on the site, for the email finder's patterns.
    emails_seen TEXT NOT NULL DEFAULT '[]',
    is_trusted BIGINT NOT NULL DEFAULT 0,
    fields_filled BIGINT NOT NULL DEFAULT 0,
    completeness_score BIGINT NOT NULL DEFAULT 0,
    -- How the domain entered the pool: import, api, list
    source TEXT NOT NULL,
    -- {stage: reason} of the last enrichment's failed stages
    enrichment_errors TEXT NOT NULL DEFAULT '{}',
    created_at BIGINT NOT NULL,
    enriched_at BIGINT,
    -- When the refresh worker re-enriches it (enriched_at + the age).
    refresh_at BIGINT,
    updated_at BIGINT NOT NULL
);
CREATE UNIQUE INDEX domains_domain ON domains(domain);
CREATE INDEX domains_refresh ON domains(refresh_at);
CREATE INDEX domains_industry ON domains(industry);
CREATE INDEX domains_intent ON domains(intent_score);

-- The many-valued fields search filters on (technology names, signals),
-- one row per value, so a filter is an indexed lookup instead of a scan of
-- JSON text. Rewritten with the record on every enrichment.
CREATE TABLE domain_tags (
    domain_id BIGINT NOT NULL REFERENCES domains(id) ON DELETE CASCADE,
    -- technology (lower case), signal (either of spec/2's sets)
    kind TEXT NOT NULL,
    value TEXT NOT NULL,
    PRIMARY KEY (domain_id, kind, value)
);
CREATE INDEX domain_tags_lookup ON domain_tags(kind, value, domain_id);

-- Change records of the monitored fields (spec/2 "Watched domain"): each
-- re-enrichment compares the new record with the stored one.
CREATE TABLE domain_changes (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    domain_id BIGINT NOT NULL REFERENCES domains(id) ON DELETE CASCADE,
    field_changed TEXT NOT NULL,
    old_value TEXT,
    new_value TEXT,
    detected_at BIGINT NOT NULL
);
CREATE INDEX domain_changes_recent ON domain_changes(domain_id, detected_at);

-- Accounts that asked for a domain's enrichment and have not yet been told
-- it finished: each gets a domain.enriched event in the enrichment's
-- transaction, and its row is removed then.
CREATE TABLE domain_enrichment_requests (
    domain_id BIGINT NOT NULL REFERENCES domains(id) ON DELETE CASCADE,
    account_id BIGINT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
    requested_at BIGINT NOT NULL,
    PRIMARY KEY (domain_id, account_id)
);
