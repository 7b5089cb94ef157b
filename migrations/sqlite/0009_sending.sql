-- The sending engine (issue 9): messages, per-step events, daily counters,
-- tasks, warmup state and send-account reputation.

-- Sequence state the sender and sequence warmup keep.
-- paused_reason: why the engine paused it (auto-pause on bounces), NULL when a user did.
ALTER TABLE sequences ADD COLUMN paused_reason TEXT;
ALTER TABLE sequences ADD COLUMN warmup_paused_at BIGINT;
-- conservative, moderate, aggressive, custom (spec/3 presets); NULL until chosen.
ALTER TABLE sequences ADD COLUMN warmup_preset TEXT;

-- A send account the sender could not use (authentication failed...):
-- the server's words, shown to the owner; status moves to 'error'.
ALTER TABLE send_accounts ADD COLUMN last_error TEXT;

-- The sender's lease on an enrollment it claimed: the owner's name and
-- when the lease runs out (a crashed sender's work falls due again then).
ALTER TABLE enrollments ADD COLUMN lease_owner TEXT;
ALTER TABLE enrollments ADD COLUMN lease_until BIGINT;
-- A live sender renews its leases while their sends are in flight.
CREATE INDEX enrollments_lease ON enrollments(lease_owner) WHERE lease_owner IS NOT NULL;
-- When the enrollment's last step action happened (a send, a task, a skip):
-- the base of the next step's delay.
ALTER TABLE enrollments ADD COLUMN last_step_at BIGINT;

-- One row per (enrollment, step) the sender sends. Written before the SMTP
-- transaction, so a send interrupted by a crash is retried with the same
-- Message-ID (receivers deduplicate on it) and never twice once recorded.
CREATE TABLE sequence_messages (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    account_id BIGINT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
    sequence_id BIGINT NOT NULL REFERENCES sequences(id) ON DELETE CASCADE,
    enrollment_id BIGINT NOT NULL REFERENCES enrollments(id) ON DELETE CASCADE,
    -- The step as it was when sent; kept when the step is deleted later.
    step_id BIGINT NOT NULL,
    step_position BIGINT NOT NULL,
    send_account_id BIGINT,
    -- 'a', 'b', a multivariate label, or NULL for a plain step.
    variant TEXT,
    -- The RFC 5322 Message-ID without angle brackets.
    message_id TEXT NOT NULL,
    to_email TEXT NOT NULL,
    subject TEXT,
    -- JSON array of the original link URLs, in the order their tracking
    -- tokens number them (click redirects go only to these).
    links TEXT,
    -- sending, sent, failed
    status TEXT NOT NULL,
    error TEXT,
    created_at BIGINT NOT NULL,
    sent_at BIGINT
);
CREATE UNIQUE INDEX sequence_messages_step ON sequence_messages(enrollment_id, step_id);
-- The inbox matches replies by In-Reply-To / References.
CREATE INDEX sequence_messages_message_id ON sequence_messages(message_id);

-- spec/1 "Events": sent, delivered, opened, clicked, replied, bounced,
-- unsubscribed, per step and message. They feed analytics and A/B results.
CREATE TABLE sequence_events (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    account_id BIGINT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
    sequence_id BIGINT NOT NULL REFERENCES sequences(id) ON DELETE CASCADE,
    step_id BIGINT,
    enrollment_id BIGINT,
    message_id BIGINT REFERENCES sequence_messages(id) ON DELETE CASCADE,
    send_account_id BIGINT,
    event_type TEXT NOT NULL,
    variant TEXT,
    -- clicked: the original URL.
    url TEXT,
    -- replied: the classification label; bounced: hard or soft.
    detail TEXT,
    -- 1 for the first event of its type for the message (unique opens and
    -- clicks); every other kind is recorded once per message anyway.
    first_of_kind BIGINT NOT NULL DEFAULT 1,
    created_at BIGINT NOT NULL
);
CREATE INDEX sequence_events_step ON sequence_events(sequence_id, step_id, event_type);
CREATE INDEX sequence_events_enrollment ON sequence_events(enrollment_id, step_id, event_type);
-- A send account's recent sends and bounces (pool rotation skips accounts
-- over their bounce threshold; reputation roll-ups).
CREATE INDEX sequence_events_send_account ON sequence_events(send_account_id, created_at);
-- A message's clicks (the first is the unique one).
CREATE INDEX sequence_events_clicks ON sequence_events(message_id) WHERE event_type = 'clicked';
-- Every kind but clicked happens at most once per message.
CREATE UNIQUE INDEX sequence_events_once ON sequence_events(message_id, event_type)
    WHERE event_type <> 'clicked';

-- Per sequence and UTC day (days since the epoch): what the daily limit and
-- the warmup dashboard's chart read without counting events.
CREATE TABLE sequence_days (
    sequence_id BIGINT NOT NULL REFERENCES sequences(id) ON DELETE CASCADE,
    day BIGINT NOT NULL,
    account_id BIGINT NOT NULL,
    sent BIGINT NOT NULL DEFAULT 0,
    bounced BIGINT NOT NULL DEFAULT 0,
    complaints BIGINT NOT NULL DEFAULT 0,
    -- The cap that applied that day (daily limit or warmup ramp).
    effective_limit BIGINT,
    PRIMARY KEY (sequence_id, day)
);

-- Non-email actionable steps (linkedin, phone, manual, sms) become tasks
-- on the enrollment; they never block the sequence.
CREATE TABLE enrollment_tasks (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    account_id BIGINT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
    sequence_id BIGINT NOT NULL REFERENCES sequences(id) ON DELETE CASCADE,
    enrollment_id BIGINT NOT NULL REFERENCES enrollments(id) ON DELETE CASCADE,
    step_id BIGINT NOT NULL,
    step_type TEXT NOT NULL,
    -- open, completed
    status TEXT NOT NULL,
    title TEXT NOT NULL,
    notes TEXT,
    created_at BIGINT NOT NULL,
    completed_at BIGINT
);
CREATE UNIQUE INDEX enrollment_tasks_step ON enrollment_tasks(enrollment_id, step_id);
CREATE INDEX enrollment_tasks_sequence ON enrollment_tasks(sequence_id, status);

-- Send-account reputation history (spec/3): one row per account and UTC day
-- with activity, written by the daily roll-up.
CREATE TABLE send_account_reputation (
    send_account_id BIGINT NOT NULL REFERENCES send_accounts(id) ON DELETE CASCADE,
    day BIGINT NOT NULL,
    account_id BIGINT NOT NULL,
    reputation_score REAL NOT NULL,
    bounce_rate REAL,
    complaint_rate REAL,
    total_sent BIGINT NOT NULL,
    PRIMARY KEY (send_account_id, day)
);

-- DNS answers the warmup checks cache: blacklist results 24 h per domain,
-- deliverability reports 1 h per send account (key says which).
CREATE TABLE dns_check_cache (
    cache_key TEXT PRIMARY KEY,
    body TEXT NOT NULL,
    checked_at BIGINT NOT NULL,
    expires_at BIGINT NOT NULL
);
