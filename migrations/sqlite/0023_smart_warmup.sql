-- Smart warmup (issue 34): the pool of send accounts that exchange mail,
-- the messages they exchanged, and the analytics roll-up.

-- A send account in the pool. status: active, paused, completed, failed
-- (leaving the pool deletes the row). ramp_origin is warmup_started_at
-- shifted forward by the time spent paused or failed, so the ramp resumes
-- where it stopped. next_send_at and next_scan_at are the due-time indexes
-- of the exchange and of the recipient side, each with its own lease.
CREATE TABLE smart_warmup_members (
    send_account_id BIGINT PRIMARY KEY REFERENCES send_accounts(id) ON DELETE CASCADE,
    account_id BIGINT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
    email TEXT NOT NULL,
    status TEXT NOT NULL,
    persona_name TEXT NOT NULL,
    persona_tone TEXT NOT NULL,
    persona_industry TEXT NOT NULL,
    provider TEXT NOT NULL,
    started_at BIGINT NOT NULL,
    ramp_origin BIGINT NOT NULL,
    paused_at BIGINT,
    completed_at BIGINT,
    smtp_failures BIGINT NOT NULL DEFAULT 0,
    imap_failures BIGINT NOT NULL DEFAULT 0,
    last_error TEXT,
    warmup_day BIGINT NOT NULL DEFAULT 0,
    sent_on_day BIGINT NOT NULL DEFAULT 0,
    next_send_at BIGINT NOT NULL,
    send_lease_until BIGINT,
    send_lease_owner TEXT,
    next_scan_at BIGINT NOT NULL,
    scan_lease_until BIGINT,
    scan_lease_owner TEXT,
    inbox_uidvalidity BIGINT,
    inbox_last_uid BIGINT NOT NULL DEFAULT 0,
    spam_folder TEXT,
    spam_uidvalidity BIGINT,
    spam_last_uid BIGINT NOT NULL DEFAULT 0,
    updated_at BIGINT NOT NULL
);
CREATE INDEX smart_warmup_members_send ON smart_warmup_members(status, next_send_at);
CREATE INDEX smart_warmup_members_scan ON smart_warmup_members(status, next_scan_at);
CREATE INDEX smart_warmup_members_account ON smart_warmup_members(account_id);

-- One pool message. token is the per-message token carried in the marker
-- header and the body; thread_token is the first message's. status:
-- sending (written before SMTP), sent (accepted), bounced, failed (never
-- accepted: deferred or the sender's login refused). placement: where the
-- recipient side first found it (inbox, spam). reply_due_at: when the
-- recipient answers (NULL: it does not).
CREATE TABLE smart_warmup_messages (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    token TEXT NOT NULL UNIQUE,
    thread_token TEXT NOT NULL,
    depth BIGINT NOT NULL,
    sender_id BIGINT NOT NULL REFERENCES send_accounts(id) ON DELETE CASCADE,
    recipient_id BIGINT NOT NULL REFERENCES send_accounts(id) ON DELETE CASCADE,
    sender_account_id BIGINT NOT NULL,
    recipient_account_id BIGINT NOT NULL,
    recipient_provider TEXT NOT NULL,
    message_id TEXT NOT NULL,
    parent_message_id TEXT,
    references_ids TEXT,
    subject TEXT NOT NULL,
    body TEXT NOT NULL,
    text_hash TEXT NOT NULL,
    source TEXT NOT NULL,
    ai_tokens BIGINT NOT NULL DEFAULT 0,
    ai_cost_usd REAL NOT NULL DEFAULT 0,
    status TEXT NOT NULL,
    error TEXT,
    day BIGINT NOT NULL,
    sent_at BIGINT NOT NULL,
    placement TEXT,
    found_at BIGINT,
    is_read BIGINT NOT NULL DEFAULT 0,
    flagged BIGINT NOT NULL DEFAULT 0,
    reply_due_at BIGINT,
    replied_at BIGINT
);
-- No two messages of a pool day have the same text.
CREATE UNIQUE INDEX smart_warmup_messages_text ON smart_warmup_messages(day, text_hash);
CREATE INDEX smart_warmup_messages_pair ON smart_warmup_messages(sender_id, recipient_id, sent_at);
CREATE INDEX smart_warmup_messages_recipient ON smart_warmup_messages(recipient_id, sent_at);
CREATE INDEX smart_warmup_messages_reply ON smart_warmup_messages(recipient_id, reply_due_at);
CREATE INDEX smart_warmup_messages_sent ON smart_warmup_messages(sent_at);
CREATE INDEX smart_warmup_messages_thread ON smart_warmup_messages(thread_token);

-- Per sending account, day and recipients' provider, rewritten by the
-- analytics refresh (every analytics_refresh_seconds) from the messages.
CREATE TABLE smart_warmup_rollups (
    send_account_id BIGINT NOT NULL REFERENCES send_accounts(id) ON DELETE CASCADE,
    account_id BIGINT NOT NULL,
    day BIGINT NOT NULL,
    provider TEXT NOT NULL,
    sent BIGINT NOT NULL,
    delivered BIGINT NOT NULL,
    bounced BIGINT NOT NULL,
    inbox BIGINT NOT NULL,
    spam BIGINT NOT NULL,
    replies BIGINT NOT NULL,
    engaged BIGINT NOT NULL,
    threads BIGINT NOT NULL,
    thread_messages BIGINT NOT NULL,
    thread_span_ms BIGINT NOT NULL,
    generated BIGINT NOT NULL,
    ai_tokens BIGINT NOT NULL,
    ai_cost_usd REAL NOT NULL,
    PRIMARY KEY (send_account_id, day, provider)
);
CREATE INDEX smart_warmup_rollups_account ON smart_warmup_rollups(account_id, day);
