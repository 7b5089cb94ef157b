-- Workflow budgets (issue 30): a monthly cap on a workflow's AI spend.
-- One row per workflow, made by the first PUT or the first AI call
-- (spend is tracked without a cap too). `monthly_cap_usd` 0 means no cap.
-- `spend_usd` is the spend of `spend_month` ('YYYY-MM', UTC): a debit or a
-- read in a later month starts from 0. `paused_by_budget` marks a pause the
-- cap made, which a reset lifts; a user's own pause never sets it.
CREATE TABLE workflow_budgets (
    workflow_id BIGINT PRIMARY KEY REFERENCES workflows(id) ON DELETE CASCADE,
    account_id BIGINT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
    monthly_cap_usd REAL NOT NULL DEFAULT 0,
    auto_pause_on_exceed BIGINT NOT NULL DEFAULT 0,
    spend_usd REAL NOT NULL DEFAULT 0,
    spend_month TEXT NOT NULL,
    paused_by_budget BIGINT NOT NULL DEFAULT 0,
    updated_at BIGINT NOT NULL
);
