-- Up Migration
-- When an API key last authenticated a send (docs/dashboard.md, "API keys"). Written by the send
-- path at most once a minute per key (a conditional update, never in the send's way), so it is
-- "last used" to the minute; null until the key is first used.
ALTER TABLE api_keys ADD COLUMN last_used_at timestamptz;

-- Down Migration
ALTER TABLE api_keys DROP COLUMN last_used_at;
