-- Up Migration
-- Idempotency-Key records: a retried request returns the recorded outcome and never sends twice.
CREATE TABLE idempotency_records (
  customer_id      text NOT NULL,
  idempotency_key  text NOT NULL,
  request_hash     text NOT NULL,
  command_id       text NOT NULL,
  message_id       text NOT NULL,
  created_at       timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (customer_id, idempotency_key)
);

-- Queryable projection of the policy log (Kafka keeps the log itself). One row per command.
CREATE TABLE policy_log (
  log_id          bigserial PRIMARY KEY,
  command_id      text NOT NULL UNIQUE,
  event_id        text NOT NULL,
  customer_id     text NOT NULL,
  instance_id     text NOT NULL,
  message_id      text NOT NULL,
  recipient       text NOT NULL,
  message_purpose text NOT NULL,
  message_digest  text NOT NULL,
  decision        text NOT NULL CHECK (decision IN ('accepted', 'rejected')),
  error_code      text,
  error_message   text,
  reasons         jsonb NOT NULL,
  policy_version  text NOT NULL,
  decided_at      timestamptz NOT NULL,
  -- The whole SendDecided event as appended, so a redelivered command re-emits it byte for byte.
  decision_event  jsonb NOT NULL
);
CREATE INDEX policy_log_customer_time_idx ON policy_log (customer_id, decided_at);

-- Delivery state per message: the guard that stops a redelivered decision from sending twice.
CREATE TABLE deliveries (
  message_id           text PRIMARY KEY,
  command_id           text NOT NULL UNIQUE,
  customer_id          text NOT NULL,
  instance_id          text NOT NULL,
  log_id               bigint NOT NULL,
  state                text NOT NULL CHECK (state IN ('dispatching', 'dispatched', 'failed', 'unknown')),
  provider_message_id  text,
  failure_reason       text,
  failure_detail       text,
  outcome_event        jsonb,
  created_at           timestamptz NOT NULL DEFAULT now(),
  updated_at           timestamptz NOT NULL DEFAULT now()
);

-- Down Migration
DROP TABLE deliveries;
DROP TABLE policy_log;
DROP TABLE idempotency_records;
