-- Up Migration
-- Sends whose outcome is not known (the process died mid-call, or the answer never came) are
-- resolved by the delivery service within seconds: it asks the manager whether it holds the
-- message (Evolution v2 POST /chat/findMessages) and marks it dispatched, or sends it again under
-- a new attempt when the manager confirms it is absent, or keeps asking with backoff while the
-- manager is unreachable, and fails it (no_ack) only after ACK_DEADLINE_MS.
ALTER TABLE deliveries
  -- The attempt in flight or last made; a resend bumps it, and an outcome is recorded only for
  -- the attempt it belongs to (a late answer of an attempt given up on changes nothing).
  ADD COLUMN attempt int NOT NULL DEFAULT 1,
  ADD COLUMN attempt_started_at timestamptz NOT NULL DEFAULT now(),
  -- When the resolver looks at it next, and how many lookups found the manager unreachable.
  ADD COLUMN next_check_at timestamptz,
  ADD COLUMN failed_checks int NOT NULL DEFAULT 0,
  -- What a resolution needs to compare and, if absent, to send again; kept only while the
  -- outcome is open and cleared as soon as it is known.
  ADD COLUMN dispatch_phone text,
  ADD COLUMN dispatch_text text;

CREATE INDEX deliveries_open_idx ON deliveries (attempt_started_at) WHERE state IN ('dispatching', 'unknown');

-- The resolver asks the manager itself now: the manager's send.message reports are not needed.
DROP TABLE manager_sends;
DROP INDEX IF EXISTS deliveries_unknown_idx;

-- Down Migration
CREATE TABLE manager_sends (
  instance_id          text NOT NULL,
  provider_message_id  text NOT NULL,
  recipient            text NOT NULL,
  message_digest       text NOT NULL,
  seen_at              timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (instance_id, provider_message_id)
);
DROP INDEX deliveries_open_idx;
ALTER TABLE deliveries DROP COLUMN attempt, DROP COLUMN attempt_started_at, DROP COLUMN next_check_at,
  DROP COLUMN failed_checks, DROP COLUMN dispatch_phone, DROP COLUMN dispatch_text;
