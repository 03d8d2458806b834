-- Up Migration
-- The policy state is read and written whole by the policy consumer, never queried inside: plain
-- json (kept as text) spares Postgres converting every snapshot to jsonb on each batch.
ALTER TABLE policy_state ALTER COLUMN state TYPE json USING state::json;

-- Down Migration
ALTER TABLE policy_state ALTER COLUMN state TYPE jsonb USING state::jsonb;
