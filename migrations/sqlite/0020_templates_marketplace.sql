-- Templates (spec/3 "Template"): grants, installs and ratings of the
-- template packs' templates, and the community marketplace (spec/3
-- "Marketplace entry"). Template ids are the packs' stable strings; the
-- templates themselves live in the components, not here.

-- Ownership given by an operator (`outreach templates grant`), since
-- payments are outside this product.
CREATE TABLE template_grants (
    account_id BIGINT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
    template_id TEXT NOT NULL,
    granted_at BIGINT NOT NULL,
    PRIMARY KEY (account_id, template_id)
);

-- One row per install; workflow_id has no foreign key, since an install
-- stays counted (and lets its account rate) after the workflow is deleted.
CREATE TABLE template_installs (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    account_id BIGINT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
    template_id TEXT NOT NULL,
    workflow_id BIGINT NOT NULL,
    installed_at BIGINT NOT NULL
);
CREATE INDEX template_installs_template ON template_installs(template_id);
CREATE INDEX template_installs_account ON template_installs(account_id, template_id);

CREATE TABLE template_ratings (
    account_id BIGINT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
    template_id TEXT NOT NULL,
    template_type TEXT NOT NULL,
    rating BIGINT NOT NULL,
    review TEXT NOT NULL DEFAULT '',
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL,
    PRIMARY KEY (account_id, template_id)
);
CREATE INDEX template_ratings_template ON template_ratings(template_id);

-- An author's public handle, chosen at the first publish and kept.
CREATE TABLE marketplace_authors (
    account_id BIGINT PRIMARY KEY REFERENCES accounts(id) ON DELETE CASCADE,
    handle TEXT NOT NULL UNIQUE
);

CREATE TABLE marketplace_entries (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    account_id BIGINT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
    user_id BIGINT,
    name TEXT NOT NULL,
    -- The name lowercased: unique per author.
    name_key TEXT NOT NULL,
    description TEXT NOT NULL,
    -- Name and description lowercased, what `q` searches.
    search_text TEXT NOT NULL,
    category TEXT NOT NULL,
    tags TEXT NOT NULL,
    difficulty TEXT NOT NULL,
    trigger_type TEXT NOT NULL,
    -- The scrubbed definition (JSON): trigger_config, conditions, actions,
    -- execution_limits, retry_failed.
    definition TEXT NOT NULL,
    install_count BIGINT NOT NULL DEFAULT 0,
    rating_sum BIGINT NOT NULL DEFAULT 0,
    rating_count BIGINT NOT NULL DEFAULT 0,
    -- rating_sum / rating_count (0 without ratings), kept with them so that
    -- top_rated is an index walk.
    average_rating REAL NOT NULL DEFAULT 0,
    is_public BIGINT NOT NULL DEFAULT 1,
    created_at BIGINT NOT NULL,
    UNIQUE (account_id, name_key)
);
-- One index per sort, its order first, then the columns every search
-- filters on, so a page walks one index and reads only the rows it answers.
CREATE INDEX marketplace_popular ON marketplace_entries(install_count DESC, id DESC, is_public, account_id, category, difficulty);
CREATE INDEX marketplace_newest ON marketplace_entries(created_at DESC, id DESC, is_public, account_id, category, difficulty);
CREATE INDEX marketplace_top_rated ON marketplace_entries(average_rating DESC, rating_count DESC, id DESC, is_public, account_id, category, difficulty);
-- Counts without `q` read this one alone.
CREATE INDEX marketplace_visible ON marketplace_entries(is_public, category, difficulty, account_id);

-- `q` on SQLite: a trigram index of search_text (substrings of three
-- characters or more) with the entry's facets beside it, so that a count
-- is answered by the index alone: `§c<category>§ §d<difficulty>§`, and
-- `§pv§ §o<account id>§` for a private entry. Kept by triggers; entries are
-- never renamed or re-filed.
CREATE VIRTUAL TABLE marketplace_search USING fts5(
    search_text, facets, content='', contentless_delete=1, tokenize='trigram'
);
CREATE TRIGGER marketplace_search_insert AFTER INSERT ON marketplace_entries BEGIN
    INSERT INTO marketplace_search(rowid, search_text, facets) VALUES (
        new.id, new.search_text,
        '§c' || new.category || '§ §d' || new.difficulty || '§'
            || CASE WHEN new.is_public = 1 THEN '' ELSE ' §pv§ §o' || new.account_id || '§' END
    );
END;
CREATE TRIGGER marketplace_search_delete AFTER DELETE ON marketplace_entries BEGIN
    DELETE FROM marketplace_search WHERE rowid = old.id;
END;

CREATE TABLE marketplace_installs (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    entry_id BIGINT NOT NULL REFERENCES marketplace_entries(id) ON DELETE CASCADE,
    account_id BIGINT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
    workflow_id BIGINT NOT NULL,
    installed_at BIGINT NOT NULL
);
CREATE INDEX marketplace_installs_entry ON marketplace_installs(entry_id, account_id);

CREATE TABLE marketplace_ratings (
    entry_id BIGINT NOT NULL REFERENCES marketplace_entries(id) ON DELETE CASCADE,
    account_id BIGINT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
    rating BIGINT NOT NULL,
    review TEXT NOT NULL DEFAULT '',
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL,
    PRIMARY KEY (entry_id, account_id)
);
