-- The rendering engine reads an account's freshest cached enrichment of a
-- domain whichever user cached it (Vendors::cached_enrichment_for_account);
-- the existing index starts with user_key and cannot serve that lookup.
CREATE INDEX vendor_cache_account ON vendor_cache(account_id, family, subject, expires_at);
