-- Workflows (issue 29): definitions, their versions, runs with their
-- checkpoints and stream events, and the per-workflow memory of
-- `cross_run_memory`.

CREATE TABLE workflows (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    account_id BIGINT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
    name TEXT NOT NULL,
    description TEXT NOT NULL DEFAULT '',
    trigger_type TEXT NOT NULL,
    -- JSON texts, as checked by workflows::definition.
    trigger_config TEXT NOT NULL,
    conditions TEXT NOT NULL,
    actions TEXT NOT NULL,
    execution_limits TEXT NOT NULL,
    canvas_data TEXT,
    retry_failed BIGINT NOT NULL DEFAULT 0,
    is_active BIGINT NOT NULL DEFAULT 1,
    -- Webhook triggers only; the token is the secret of the public route.
    webhook_token TEXT,
    trigger_count BIGINT NOT NULL DEFAULT 0,
    -- The target a trigger names (alert, audience, watch, keyword id), for
    -- the event fan-out's lookup.
    trigger_target BIGINT,
    -- Schedule triggers only: the next due time the scheduler fires.
    next_due_at BIGINT,
    run_count BIGINT NOT NULL DEFAULT 0,
    last_run_at BIGINT,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL
);
CREATE INDEX workflows_account ON workflows(account_id, id);
CREATE UNIQUE INDEX workflows_webhook_token ON workflows(webhook_token);
CREATE INDEX workflows_trigger ON workflows(account_id, trigger_type, is_active);
CREATE INDEX workflows_due ON workflows(next_due_at);

-- The definition before each PUT (and after each rollback).
CREATE TABLE workflow_versions (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    workflow_id BIGINT NOT NULL REFERENCES workflows(id) ON DELETE CASCADE,
    account_id BIGINT NOT NULL,
    version_number BIGINT NOT NULL,
    change_summary TEXT NOT NULL,
    snapshot TEXT NOT NULL,
    created_at BIGINT NOT NULL
);
CREATE INDEX workflow_versions_workflow ON workflow_versions(workflow_id, id);

-- A run is its own queue entry: `queued` rows are due at due_at; a
-- `running` row is leased to one server until lease_until and carries its
-- checkpoint (the next top-level action and the working set after the
-- last finished one), so another server resumes it where it stopped.
CREATE TABLE workflow_runs (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    workflow_id BIGINT NOT NULL REFERENCES workflows(id) ON DELETE CASCADE,
    account_id BIGINT NOT NULL,
    status TEXT NOT NULL,
    trigger_event TEXT NOT NULL,
    trigger_data TEXT NOT NULL,
    domain_count BIGINT NOT NULL DEFAULT 0,
    checkpoint TEXT NOT NULL,
    actions_executed TEXT NOT NULL DEFAULT '[]',
    error TEXT,
    rerun_of BIGINT,
    due_at BIGINT NOT NULL,
    lease_owner TEXT,
    lease_until BIGINT,
    started_at BIGINT,
    finished_at BIGINT,
    created_at BIGINT NOT NULL
);
CREATE INDEX workflow_runs_workflow ON workflow_runs(workflow_id, id);
CREATE INDEX workflow_runs_due ON workflow_runs(status, due_at);
CREATE INDEX workflow_runs_lease ON workflow_runs(status, lease_until);

-- What the run stream sends, in order, so a finished run replays and
-- Last-Event-ID resumes: `action` events, then `run.finished`.
CREATE TABLE workflow_run_events (
    run_id BIGINT NOT NULL REFERENCES workflow_runs(id) ON DELETE CASCADE,
    seq BIGINT NOT NULL,
    name TEXT NOT NULL,
    data TEXT NOT NULL,
    PRIMARY KEY (run_id, seq)
);

CREATE TABLE workflow_memory (
    workflow_id BIGINT NOT NULL REFERENCES workflows(id) ON DELETE CASCADE,
    key TEXT NOT NULL,
    value TEXT NOT NULL,
    expires_at BIGINT,
    PRIMARY KEY (workflow_id, key)
);
