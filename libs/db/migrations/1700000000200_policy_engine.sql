-- Up Migration
-- Projections of the policy engine, all written by the policy consumer in the same transaction as
-- the policy-log rows, and all rebuildable from Kafka (gatewayctl projections rebuild).

-- Each customer's folded policy state (the decider's input), as plain JSON.
CREATE TABLE policy_state (
  customer_id  text PRIMARY KEY,
  state        jsonb NOT NULL,
  updated_at   timestamptz NOT NULL DEFAULT now()
);

-- The next customer-events offset to apply, per partition: a redelivered record below it has
-- already had its effect and is not folded again (exactly-once effect on the projections).
CREATE TABLE policy_offsets (
  topic       text NOT NULL,
  partition   int NOT NULL,
  next_offset bigint NOT NULL,
  PRIMARY KEY (topic, partition)
);

-- Head of the hash chain of the policy log, per partition.
CREATE TABLE policy_chain (
  partition   int PRIMARY KEY,
  head_hash   text NOT NULL,
  last_log_id bigint NOT NULL
);

ALTER TABLE policy_log
  ADD COLUMN partition_chain int NOT NULL DEFAULT -1,
  ADD COLUMN prev_hash text NOT NULL DEFAULT '',
  ADD COLUMN entry_hash text NOT NULL DEFAULT '';
CREATE INDEX policy_log_chain_idx ON policy_log (partition_chain, log_id);

-- Opt-outs and manual suppressions, per customer (queryable; the decider reads policy_state).
CREATE TABLE suppressions (
  customer_id text NOT NULL,
  recipient   text NOT NULL,
  source      text NOT NULL CHECK (source IN ('manual', 'opt_out')),
  reason      text NOT NULL,
  created_by  text NOT NULL,
  created_at  timestamptz NOT NULL,
  PRIMARY KEY (customer_id, recipient, source)
);

-- Accepted sends per customer and quota window ('2026-11-22', '2026-11').
CREATE TABLE quota_usage (
  customer_id text NOT NULL,
  window_key  text NOT NULL,
  used        int NOT NULL,
  PRIMARY KEY (customer_id, window_key)
);

-- Down Migration
DROP TABLE quota_usage;
DROP TABLE suppressions;
ALTER TABLE policy_log DROP COLUMN partition_chain, DROP COLUMN prev_hash, DROP COLUMN entry_hash;
DROP TABLE policy_chain;
DROP TABLE policy_offsets;
DROP TABLE policy_state;
