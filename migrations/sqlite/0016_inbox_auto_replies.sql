-- Automatic replies (the workflows' auto_reply_template action, through
-- outreach-outbound's OutboundPort): when a reply was answered
-- automatically and the Message-ID of that answer. A reply is answered at
-- most once: the action claims it by setting auto_replied_at, and clears
-- it again when the answer could not be sent.
ALTER TABLE inbox_replies ADD COLUMN auto_replied_at BIGINT;
ALTER TABLE inbox_replies ADD COLUMN auto_reply_message_id TEXT;
