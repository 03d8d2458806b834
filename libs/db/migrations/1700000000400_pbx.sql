-- Up Migration
-- PBX integrations: telephony middleware posting call events to /integrations/pbx/webhook/{id}.
CREATE TABLE pbx_integrations (
  id                    serial PRIMARY KEY,
  customer_id           text NOT NULL REFERENCES customers(id),
  instance_id           text NOT NULL REFERENCES instances(id),
  -- SHA-256 of the PBX secret; the secret itself is shown once.
  secret_hash           bytea NOT NULL,
  -- The optional HMAC signing secret, sealed with AES-256-GCM (it must be usable to verify).
  hmac_secret_enc       text,
  templates             jsonb NOT NULL,
  enabled_events        text[] NOT NULL,
  default_purpose       text NOT NULL DEFAULT 'support',
  rate_limit_per_minute int NOT NULL DEFAULT 120,
  disabled_at           timestamptz,
  created_at            timestamptz NOT NULL DEFAULT now()
);

-- Signatures seen inside the replay window: a signature used twice is a replay.
CREATE TABLE pbx_signatures_used (
  integration_id int NOT NULL,
  signature      text NOT NULL,
  used_at        timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (integration_id, signature)
);

-- Idempotency of PBX events: by external_message_id, or by body digest inside the replay window.
CREATE TABLE pbx_requests (
  integration_id int NOT NULL,
  dedupe_key     text NOT NULL,
  command_id     text NOT NULL,
  response       jsonb,
  created_at     timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (integration_id, dedupe_key)
);

-- Down Migration
DROP TABLE pbx_requests;
DROP TABLE pbx_signatures_used;
DROP TABLE pbx_integrations;
