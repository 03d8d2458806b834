-- Up Migration
-- Customer webhooks (spec 2.5, 6): one configuration per instance, one delivery row per
-- (gateway event, endpoint), and every attempt kept for the delivery log.

CREATE TABLE webhook_endpoints (
  instance_id            text PRIMARY KEY REFERENCES instances(id),
  customer_id            text NOT NULL REFERENCES customers(id),
  destination_url        text NOT NULL,
  -- Resolved event names (groups expanded when the configuration was saved).
  events                 text[] NOT NULL,
  status                 text NOT NULL CHECK (status IN ('active', 'paused', 'disabled')),
  -- 'gone' (410), 'failing_too_long', or null.
  disabled_reason        text,
  disabled_at            timestamptz,
  -- whsec_ secret sealed with AES-256-GCM; shown once, at creation and at rotation.
  signing_secret_enc     text NOT NULL,
  secret_rotated_at      timestamptz NOT NULL DEFAULT now(),
  -- Health: the first failure since the last success, and the streak length.
  failing_since          timestamptz,
  consecutive_failures   integer NOT NULL DEFAULT 0,
  last_success_at        timestamptz,
  created_at             timestamptz NOT NULL DEFAULT now(),
  updated_at             timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE webhook_deliveries (
  -- whd_ + 32 hex, derived from (event id, instance id): the same on every attempt and replay.
  delivery_id       text PRIMARY KEY,
  event_id          text NOT NULL,
  instance_id       text NOT NULL REFERENCES webhook_endpoints(instance_id),
  customer_id       text NOT NULL,
  event             text NOT NULL,
  -- The exact JSON body that is signed and posted.
  body              text NOT NULL,
  occurred_at       timestamptz NOT NULL,
  -- pending (due at next_attempt_at), in_flight (claimed until lease_until), delivered, failed.
  state             text NOT NULL CHECK (state IN ('pending', 'in_flight', 'delivered', 'failed')),
  next_attempt_at   timestamptz NOT NULL,
  lease_until       timestamptz,
  -- Attempts ever made (X-Chat-Gateway-Attempt), and attempts in the current retry round
  -- (the schedule position; a resend or recover starts a new round).
  attempts          integer NOT NULL DEFAULT 0,
  round_attempts    integer NOT NULL DEFAULT 0,
  last_status       integer,
  last_error        text,
  created_at        timestamptz NOT NULL DEFAULT now(),
  updated_at        timestamptz NOT NULL DEFAULT now(),
  UNIQUE (event_id, instance_id)
)
-- Every delivery is updated two or three times within seconds (claimed, recorded): vacuum early
-- so the due index does not fill with dead entries that every claim has to step over.
WITH (fillfactor = 80, autovacuum_vacuum_scale_factor = 0.02, autovacuum_vacuum_insert_scale_factor = 0.05, autovacuum_analyze_scale_factor = 0.02);
CREATE INDEX webhook_deliveries_due_idx ON webhook_deliveries (instance_id, next_attempt_at) WHERE state = 'pending';
CREATE INDEX webhook_deliveries_lease_idx ON webhook_deliveries (lease_until) WHERE state = 'in_flight';
CREATE INDEX webhook_deliveries_instance_idx ON webhook_deliveries (instance_id, created_at DESC);

CREATE TABLE webhook_attempts (
  id                bigserial PRIMARY KEY,
  delivery_id       text NOT NULL REFERENCES webhook_deliveries(delivery_id),
  attempt           integer NOT NULL,
  attempted_at      timestamptz NOT NULL,
  destination_url   text NOT NULL,
  status_code       integer,
  latency_ms        integer NOT NULL,
  -- The first bytes of the response body (at most 1 KiB).
  response_snippet  text NOT NULL DEFAULT '',
  error             text,
  outcome           text NOT NULL CHECK (outcome IN ('delivered', 'retry', 'failed', 'endpoint_disabled')),
  next_attempt_at   timestamptz
);
CREATE INDEX webhook_attempts_delivery_idx ON webhook_attempts (delivery_id, attempt);

-- Down Migration
DROP TABLE webhook_attempts;
DROP TABLE webhook_deliveries;
DROP TABLE webhook_endpoints;
