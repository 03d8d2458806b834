-- Up Migration
-- Events posted by instance managers (Evolution API v2 webhooks): per-instance authentication,
-- ingest dedupe, and the projections the instance-events consumer keeps.

-- SHA-256 of the per-instance webhook token (gatewayctl instance webhook-url); the token itself
-- is only ever part of the URL handed to the manager. NULL: the instance posts no events.
ALTER TABLE instances ADD COLUMN webhook_token_hash bytea;

-- One row per envelope accepted, by a digest of the envelope: a manager's retry is not appended twice.
CREATE TABLE instance_event_ingest (
  instance_id  text NOT NULL REFERENCES instances(id),
  digest       text NOT NULL,
  event_id     text NOT NULL,
  received_at  timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (instance_id, digest)
);

-- The connection state each instance last reported.
CREATE TABLE instance_connections (
  instance_id       text PRIMARY KEY REFERENCES instances(id),
  connection_state  text NOT NULL,
  qr_available      boolean NOT NULL DEFAULT false,
  updated_at        timestamptz NOT NULL
);

-- Calls seen per instance: a terminate is a missed call unless the call was accepted.
CREATE TABLE instance_calls (
  instance_id  text NOT NULL,
  call_id      text NOT NULL,
  accepted     boolean NOT NULL DEFAULT false,
  updated_at   timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (instance_id, call_id)
);

-- Down Migration
DROP TABLE instance_calls;
DROP TABLE instance_connections;
DROP TABLE instance_event_ingest;
ALTER TABLE instances DROP COLUMN webhook_token_hash;
