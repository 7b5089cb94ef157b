-- Workflow approvals (issue 30): a run that reaches wait_for_approval
-- stores one row and ends; the first decision on the public page starts a
-- new run at the action after the wait. The token is looked up by its
-- SHA-256 (token_hash) and kept sealed (token_sealed, associated data
-- `workflow_approvals:<run_id>:<action_index>:token`) only so the announcement and a resumed
-- run can print the link again. `target_sealed` is the Slack URL or email
-- address, sealed the same way (`...:target`).
CREATE TABLE workflow_approvals (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    account_id BIGINT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
    workflow_id BIGINT NOT NULL REFERENCES workflows(id) ON DELETE CASCADE,
    -- The run that waits (no foreign key: retention may prune it first).
    run_id BIGINT NOT NULL,
    action_index BIGINT NOT NULL,
    token_hash TEXT NOT NULL UNIQUE,
    token_sealed TEXT NOT NULL DEFAULT '',
    message TEXT NOT NULL,
    -- "email", "slack" or "email,slack": the announcement's channels.
    channels TEXT NOT NULL,
    target_sealed TEXT NOT NULL DEFAULT '',
    -- JSON array: the working items at the wait, the next run's input.
    items TEXT NOT NULL,
    expires_at BIGINT NOT NULL,
    decision TEXT,
    decided_at BIGINT,
    decision_run_id BIGINT,
    notified_at BIGINT,
    created_at BIGINT NOT NULL,
    UNIQUE (run_id, action_index)
);
CREATE INDEX workflow_approvals_workflow ON workflow_approvals(workflow_id);
