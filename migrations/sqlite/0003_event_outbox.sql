-- The event outbox: every area records the events of spec/2 here, inside the
-- transaction of the change that causes them; the webhooks deliverer (and
-- later workflow triggers) read undispatched rows in id order and mark them
-- dispatched in the transaction that fans them out.

CREATE TABLE event_outbox (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    account_id BIGINT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
    event_type TEXT NOT NULL,
    data TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    dispatched_at BIGINT
);
-- Undispatched rows are the deliverer's work list.
CREATE INDEX event_outbox_pending ON event_outbox(dispatched_at, id);
CREATE INDEX event_outbox_account ON event_outbox(account_id, id);
