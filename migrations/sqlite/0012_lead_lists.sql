-- Lead lists (issue 12): an account's lists of pool domains with the sales
-- funnel, and the stage history that makes time in stage and weekly trends
-- exact.

CREATE TABLE lead_lists (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    account_id BIGINT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
    name TEXT NOT NULL,
    description TEXT NOT NULL DEFAULT '',
    -- Target conversion rate in percent (0-100), or NULL.
    conversion_goal REAL,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL
);
CREATE INDEX lead_lists_account ON lead_lists(account_id, id);

-- One domain of one list; domains are normalised as the pool normalises.
CREATE TABLE list_items (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    account_id BIGINT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
    list_id BIGINT NOT NULL REFERENCES lead_lists(id) ON DELETE CASCADE,
    domain TEXT NOT NULL,
    notes TEXT NOT NULL DEFAULT '',
    -- discovered, contacted, qualified, converted
    status TEXT NOT NULL DEFAULT 'discovered',
    added_at BIGINT NOT NULL,
    status_changed_at BIGINT
);
CREATE UNIQUE INDEX list_items_domain ON list_items(list_id, domain);
CREATE INDEX list_items_account_status ON list_items(account_id, status);

-- The funnel's history: each row says an item entered a stage (status) at
-- entered_at; a NULL status says it left the account's lists (removed, or
-- its list deleted). Rows outlive their items on purpose, so last week's
-- snapshot does not change when a lead is removed today. No foreign keys to
-- the item or list for the same reason.
CREATE TABLE list_item_stages (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    account_id BIGINT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
    list_id BIGINT NOT NULL,
    item_id BIGINT NOT NULL,
    status TEXT,
    entered_at BIGINT NOT NULL
);
CREATE INDEX list_item_stages_item ON list_item_stages(item_id, id);
CREATE INDEX list_item_stages_account ON list_item_stages(account_id, entered_at);
