-- The unified inbox (issue 10): reply collection state per send account,
-- threads and replies (spec/1 "Inbox thread", "Reply").

-- The IMAP poller's state per send account. The poller claims a due
-- mailbox with a lease (one process polls a mailbox at a time), fetches
-- UIDs above inbox_last_uid, and starts over when the server's UIDVALIDITY
-- changes (replies are deduplicated by message key, so a refetch stores
-- nothing twice).
ALTER TABLE send_accounts ADD COLUMN inbox_uidvalidity BIGINT;
ALTER TABLE send_accounts ADD COLUMN inbox_last_uid BIGINT NOT NULL DEFAULT 0;
ALTER TABLE send_accounts ADD COLUMN inbox_next_poll_at BIGINT NOT NULL DEFAULT 0;
ALTER TABLE send_accounts ADD COLUMN inbox_lease_owner TEXT;
ALTER TABLE send_accounts ADD COLUMN inbox_lease_until BIGINT;
-- Consecutive failed polls (the backoff doubles with each) and the last
-- failure's words.
ALTER TABLE send_accounts ADD COLUMN inbox_failures BIGINT NOT NULL DEFAULT 0;
ALTER TABLE send_accounts ADD COLUMN inbox_error TEXT;
ALTER TABLE send_accounts ADD COLUMN inbox_polled_at BIGINT;
CREATE INDEX send_accounts_inbox_due ON send_accounts(inbox_next_poll_at);

-- Soft bounces (DSN 4.x.x) an enrollment has had; the inbox turns the next
-- one into a hard bounce at its documented count.
ALTER TABLE enrollments ADD COLUMN soft_bounces BIGINT NOT NULL DEFAULT 0;

-- spec/1 "Inbox thread". thread_id is the stable hash of the sender and the
-- normalised subject, so one conversation is one thread across mailboxes.
CREATE TABLE inbox_threads (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    account_id BIGINT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
    thread_id TEXT NOT NULL,
    domain TEXT NOT NULL,
    contact_email TEXT NOT NULL,
    subject TEXT NOT NULL,
    last_received_at BIGINT NOT NULL,
    -- The latest reply's label (its manual override when set); NULL while
    -- no reply of the thread is classified (new, or deferred as spoofing).
    last_classification TEXT,
    last_classification_confidence REAL,
    message_count BIGINT NOT NULL DEFAULT 0,
    -- open, handled, snoozed
    status TEXT NOT NULL DEFAULT 'open',
    assigned_to_user_id BIGINT,
    notes TEXT,
    snoozed_until BIGINT,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL
);
CREATE UNIQUE INDEX inbox_threads_key ON inbox_threads(account_id, thread_id);
CREATE INDEX inbox_threads_recent ON inbox_threads(account_id, last_received_at);

-- spec/1 "Reply", plus what collection found out about the message.
CREATE TABLE inbox_replies (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    account_id BIGINT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
    thread_row_id BIGINT NOT NULL REFERENCES inbox_threads(id) ON DELETE CASCADE,
    send_account_id BIGINT,
    -- The Message-ID without brackets, or "sha256:<hex>" of the raw message
    -- when it has none: the same message seen twice is stored once.
    message_key TEXT NOT NULL,
    message_id TEXT NOT NULL,
    in_reply_to TEXT NOT NULL,
    from_email TEXT NOT NULL,
    from_name TEXT NOT NULL,
    subject TEXT NOT NULL,
    -- The new text (quoted history and signature trimmed) and the whole text.
    body_text TEXT NOT NULL,
    full_text TEXT NOT NULL,
    -- Headers, as the classifier sees them (JSON array of [name, value]).
    headers TEXT NOT NULL,
    received_at BIGINT NOT NULL,
    domain TEXT NOT NULL,
    -- What the match found (the sequence message this answers).
    sequence_id BIGINT,
    enrollment_id BIGINT,
    sequence_step_id BIGINT,
    sequence_message_id BIGINT,
    -- reply, bounce, complaint, auto_reply (outreach-mail-analysis).
    kind TEXT NOT NULL,
    -- Bounces: hard or soft, the DSN status, a reason category, the failed
    -- recipient. Auto-replies: the return date an out-of-office names.
    bounce_type TEXT,
    bounce_status TEXT,
    bounce_reason TEXT,
    failed_recipient TEXT,
    return_at BIGINT,
    -- Spoofing check: 1 when suspected (classification deferred), and the
    -- verdicts as JSON {source, spf, dkim, dmarc, connecting_host, reason}.
    spoofing_suspected BIGINT NOT NULL DEFAULT 0,
    authentication TEXT,
    -- Classification; NULL label until the worker classified it.
    classification_label TEXT,
    classification_confidence REAL,
    manually_overridden_to TEXT,
    classification_model TEXT,
    classification_provider TEXT,
    classified_at BIGINT,
    -- When the classification's effects on the enrollment were applied
    -- (once: reclassifying relabels a reply but never replays its effects).
    effects_applied_at BIGINT,
    -- The classification worker's lease on the reply while it classifies.
    classify_lease_owner TEXT,
    classify_lease_until BIGINT,
    created_at BIGINT NOT NULL
);
CREATE UNIQUE INDEX inbox_replies_key ON inbox_replies(account_id, message_key);
CREATE INDEX inbox_replies_thread ON inbox_replies(thread_row_id, received_at);
-- The classifier's queue: replies not classified and not held as spoofing.
CREATE INDEX inbox_replies_unclassified ON inbox_replies(id)
    WHERE classified_at IS NULL AND spoofing_suspected = 0;
