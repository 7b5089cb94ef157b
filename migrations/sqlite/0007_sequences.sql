-- Send accounts (spec/3 "Send account"): a customer's own mailbox, reached
-- by SMTP to send and IMAP to read replies. The four credentials are one
-- JSON object sealed with AES-GCM, the row id in the associated data.

CREATE TABLE send_accounts (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    account_id BIGINT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
    -- Lowercased; one mailbox per address and account.
    email TEXT NOT NULL,
    display_name TEXT,
    provider TEXT NOT NULL,
    -- active, paused, error, warming
    status TEXT NOT NULL,
    warmup_enabled BIGINT NOT NULL DEFAULT 0,
    warmup_progress_pct REAL NOT NULL DEFAULT 0,
    daily_send_limit BIGINT NOT NULL,
    emails_sent_today BIGINT NOT NULL DEFAULT 0,
    -- The UTC day (days since the epoch) emails_sent_today counts.
    sent_day BIGINT NOT NULL DEFAULT 0,
    smtp_host TEXT NOT NULL,
    smtp_port BIGINT NOT NULL,
    smtp_encryption TEXT NOT NULL,
    imap_host TEXT NOT NULL,
    imap_port BIGINT NOT NULL,
    credentials TEXT NOT NULL,
    smtp_verified BIGINT NOT NULL,
    imap_verified BIGINT NOT NULL,
    connected_at BIGINT NOT NULL,
    last_activity_at BIGINT,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL
);
CREATE UNIQUE INDEX send_accounts_email ON send_accounts(account_id, email);

-- Sequences (spec/1 "Sequence"). settings is the caller's JSON object as given.
CREATE TABLE sequences (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    account_id BIGINT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
    name TEXT NOT NULL,
    description TEXT,
    from_name TEXT,
    from_email TEXT,
    -- draft, active, paused
    status TEXT NOT NULL,
    daily_send_limit BIGINT NOT NULL,
    warmup_enabled BIGINT NOT NULL,
    warmup_start_volume BIGINT NOT NULL,
    warmup_increment BIGINT NOT NULL,
    warmup_started_at BIGINT,
    goal_type TEXT NOT NULL,
    goal_url TEXT,
    auto_pause_bounce_rate REAL NOT NULL,
    enable_unsubscribe BIGINT NOT NULL,
    settings TEXT NOT NULL,
    -- Single-mailbox mode; a deleted send account leaves it NULL.
    send_account_id BIGINT REFERENCES send_accounts(id) ON DELETE SET NULL,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL
);
CREATE INDEX sequences_account ON sequences(account_id, id);

-- Steps (spec/1 "Step"): positions are contiguous from 1 within a sequence.
CREATE TABLE sequence_steps (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    account_id BIGINT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
    sequence_id BIGINT NOT NULL REFERENCES sequences(id) ON DELETE CASCADE,
    position BIGINT NOT NULL,
    step_type TEXT NOT NULL,
    delay_days BIGINT NOT NULL,
    delay_hours BIGINT NOT NULL,
    subject TEXT,
    body_html TEXT,
    variant_b_subject TEXT,
    variant_b_body_html TEXT,
    ab_test_enabled BIGINT NOT NULL,
    -- 'a' or 'b' once a winner is locked (the A/B endpoints of the sending issue).
    ab_winner TEXT,
    condition_type TEXT,
    condition_step_id BIGINT,
    -- JSON array of {label, subject, body_html, weight}, or NULL.
    variants TEXT,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL
);
CREATE INDEX sequence_steps_sequence ON sequence_steps(sequence_id, position);

-- Enrollments (spec/1 "Enrollment"). current_step is the position of the
-- next step to run (step edits shift it so a contact keeps its place);
-- next_send_at is when that step is due.
CREATE TABLE enrollments (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    account_id BIGINT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
    sequence_id BIGINT NOT NULL REFERENCES sequences(id) ON DELETE CASCADE,
    domain TEXT NOT NULL,
    -- Lowercased.
    contact_email TEXT NOT NULL,
    metadata TEXT NOT NULL,
    -- active, completed, bounced, unsubscribed, replied, paused
    status TEXT NOT NULL,
    current_step BIGINT NOT NULL DEFAULT 1,
    next_send_at BIGINT,
    -- cold, warm, hot
    lead_temperature TEXT NOT NULL,
    engagement_score BIGINT NOT NULL DEFAULT 0,
    goal_completed BIGINT NOT NULL DEFAULT 0,
    goal_completed_at BIGINT,
    goal_metadata TEXT,
    enrolled_at BIGINT NOT NULL,
    paused_at BIGINT,
    updated_at BIGINT NOT NULL
);
-- The enrollment lock of spec/1 rule 4: one live enrollment per (sequence,
-- address). A concurrent insert of the same pair waits for the first and is
-- then skipped, on every server sharing the database.
CREATE UNIQUE INDEX enrollments_live ON enrollments(sequence_id, contact_email)
    WHERE status IN ('active', 'paused');
CREATE INDEX enrollments_sequence ON enrollments(sequence_id, id);
-- The sender's due-time index.
CREATE INDEX enrollments_due ON enrollments(next_send_at) WHERE status = 'active';

-- Mailbox pool (spec/1 "Mailbox pool entry"): the rotation order of a
-- sequence's mailboxes; empty means single-mailbox mode.
CREATE TABLE sequence_mailboxes (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    account_id BIGINT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
    sequence_id BIGINT NOT NULL REFERENCES sequences(id) ON DELETE CASCADE,
    send_account_id BIGINT NOT NULL REFERENCES send_accounts(id) ON DELETE CASCADE,
    position BIGINT NOT NULL,
    is_active BIGINT NOT NULL DEFAULT 1,
    last_used_at BIGINT
);
CREATE UNIQUE INDEX sequence_mailboxes_position ON sequence_mailboxes(sequence_id, position);
