-- Market intelligence (issue 32): what each pool record adds to the
-- rollups the aggregate endpoints read, the rollups themselves,
-- competitors with their enrichment snapshots, tracked keywords and their
-- matches.

-- A record's contribution to the rollups, kept beside its facets so a
-- save can take the old contribution out before adding the new one.
-- confidence_bp is the 0-1 confidence in basis points (sums stay exact);
-- entered_at is when the record entered the pool (domains.created_at).
ALTER TABLE pool_facets ADD COLUMN city TEXT;
ALTER TABLE pool_facets ADD COLUMN has_email BIGINT NOT NULL DEFAULT 0;
ALTER TABLE pool_facets ADD COLUMN confidence_bp BIGINT NOT NULL DEFAULT 0;
ALTER TABLE pool_facets ADD COLUMN entered_at BIGINT NOT NULL DEFAULT 0;
UPDATE pool_facets SET
    city = (SELECT NULLIF(TRIM(d.city), '') FROM domains d WHERE d.id = pool_facets.domain_id),
    has_email = (SELECT CASE WHEN COALESCE(d.website_email, '') <> '' THEN 1 ELSE 0 END FROM domains d WHERE d.id = pool_facets.domain_id),
    confidence_bp = (SELECT CAST(ROUND(d.confidence * 10000) AS BIGINT) FROM domains d WHERE d.id = pool_facets.domain_id),
    entered_at = (SELECT d.created_at FROM domains d WHERE d.id = pool_facets.domain_id);
-- The top domains of an industry, and its newest records (the digest).
CREATE INDEX pool_facets_confident ON pool_facets(industry, confidence_bp DESC, domain_id);
CREATE INDEX pool_facets_entered ON pool_facets(industry, entered_at);

-- Rollups over the records with facts, kept by domains::rollups in the
-- transaction of every save. industry is lower case, country upper case,
-- '' where the record has none; day is the UTC day the record entered
-- the pool (entered_at / 86400000).
CREATE TABLE pool_totals (
    industry TEXT NOT NULL,
    country TEXT NOT NULL,
    cnt BIGINT NOT NULL,
    with_email BIGINT NOT NULL,
    confidence_bp BIGINT NOT NULL,
    PRIMARY KEY (industry, country)
) WITHOUT ROWID;
CREATE TABLE pool_days (
    day BIGINT NOT NULL,
    industry TEXT NOT NULL,
    country TEXT NOT NULL,
    cnt BIGINT NOT NULL,
    PRIMARY KEY (day, industry, country)
) WITHOUT ROWID;
CREATE INDEX pool_days_industry ON pool_days(industry, day, country, cnt);
CREATE TABLE pool_city_days (
    country TEXT NOT NULL,
    day BIGINT NOT NULL,
    city TEXT NOT NULL,
    industry TEXT NOT NULL,
    cnt BIGINT NOT NULL,
    PRIMARY KEY (country, day, city, industry)
) WITHOUT ROWID;
CREATE INDEX pool_city_days_day ON pool_city_days(day, city, country, industry, cnt);
INSERT INTO pool_totals (industry, country, cnt, with_email, confidence_bp)
    SELECT COALESCE(industry, ''), COALESCE(country, ''), COUNT(*), SUM(has_email), SUM(confidence_bp)
    FROM pool_facets GROUP BY COALESCE(industry, ''), COALESCE(country, '');
INSERT INTO pool_days (day, industry, country, cnt)
    SELECT entered_at / 86400000, COALESCE(industry, ''), COALESCE(country, ''), COUNT(*)
    FROM pool_facets GROUP BY entered_at / 86400000, COALESCE(industry, ''), COALESCE(country, '');
INSERT INTO pool_city_days (country, day, city, industry, cnt)
    SELECT COALESCE(country, ''), entered_at / 86400000, city, COALESCE(industry, ''), COUNT(*)
    FROM pool_facets WHERE city IS NOT NULL
    GROUP BY COALESCE(country, ''), entered_at / 86400000, city, COALESCE(industry, '');

-- Competitors an account tracks (spec/2 "the service"). industry is the
-- one the account gave; without it the pool record's is shown.
CREATE TABLE competitors (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    account_id BIGINT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
    domain_id BIGINT NOT NULL REFERENCES domains(id) ON DELETE CASCADE,
    domain TEXT NOT NULL,
    industry TEXT,
    notes TEXT NOT NULL DEFAULT '',
    alert_email TEXT,
    created_at BIGINT NOT NULL
);
CREATE UNIQUE INDEX competitors_unique ON competitors(account_id, domain);
CREATE INDEX competitors_domain ON competitors(domain_id);

-- What each enrichment of a tracked competitor's domain found, for the
-- detail's history and the analysis's diff; written by the enrichment's
-- save while any account tracks the domain.
CREATE TABLE competitor_snapshots (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    domain_id BIGINT NOT NULL REFERENCES domains(id) ON DELETE CASCADE,
    enriched_at BIGINT NOT NULL,
    industry TEXT,
    summary TEXT,
    confidence REAL NOT NULL,
    -- As the record holds them: JSON arrays
    technologies TEXT NOT NULL,
    alert_signals TEXT NOT NULL,
    audience_signals TEXT NOT NULL
);
CREATE UNIQUE INDEX competitor_snapshots_unique ON competitor_snapshots(domain_id, enriched_at);

CREATE TABLE tracked_keywords (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    account_id BIGINT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
    -- As given, trimmed; normalised is lower case with single spaces.
    keyword TEXT NOT NULL,
    normalised TEXT NOT NULL,
    created_at BIGINT NOT NULL
);
CREATE UNIQUE INDEX tracked_keywords_unique ON tracked_keywords(account_id, normalised);

-- One row, moved on by every change to tracked_keywords, so each server's
-- keyword automaton knows when to rebuild.
CREATE TABLE tracked_keywords_version (
    id BIGINT PRIMARY KEY,
    version BIGINT NOT NULL
);
INSERT INTO tracked_keywords_version (id, version) VALUES (1, 0);

CREATE TABLE keyword_matches (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    account_id BIGINT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
    keyword_id BIGINT NOT NULL REFERENCES tracked_keywords(id) ON DELETE CASCADE,
    domain_id BIGINT NOT NULL REFERENCES domains(id) ON DELETE CASCADE,
    domain TEXT NOT NULL,
    excerpt TEXT NOT NULL,
    matched_at BIGINT NOT NULL
);
CREATE INDEX keyword_matches_keyword ON keyword_matches(keyword_id, matched_at);
CREATE INDEX keyword_matches_account ON keyword_matches(account_id, matched_at);
