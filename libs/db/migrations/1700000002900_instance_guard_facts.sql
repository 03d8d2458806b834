-- Up Migration
-- instance-events: what it has told the policy about each instance for the number guard
-- (issue 27, docs/policy.md). Each table remembers a fact once, so a fact goes to the policy the
-- first time only, and `emitted_by` names the source event whose fact told it: a redelivery of
-- that event emits the same fact again (same derived id, which the policy folds once), any other
-- event emits nothing. NULL: known, but not yet told (rows of the backfill below); the next event
-- of the instance tells it.

-- The first time the instance was seen connected (connection.update open).
CREATE TABLE instance_first_connections (
  instance_id         text PRIMARY KEY,
  first_connected_at  timestamptz NOT NULL,
  emitted_by          text
);

-- The people (E.164, or a canonical <digits>@lid) who have written to the instance.
CREATE TABLE instance_known_contacts (
  instance_id  text NOT NULL,
  contact      text NOT NULL,
  learned_at   timestamptz NOT NULL,
  emitted_by   text,
  PRIMARY KEY (instance_id, contact)
);
-- Each event looks up its own claims and the untold ones of its instance.
CREATE INDEX instance_known_contacts_told_idx ON instance_known_contacts (instance_id, emitted_by);

-- The restriction signals told (an ERROR report of one of our sends, a coded rejection, a
-- 401/403 close), each once: `signal_key` is the signal and what it is about (the provider
-- message id, or the close's date_time), so the manager reporting one twice counts once.
CREATE TABLE instance_restriction_signals (
  instance_id  text NOT NULL,
  signal_key   text NOT NULL,
  emitted_by   text NOT NULL,
  recorded_at  timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (instance_id, signal_key)
);

-- Instances this stage already saw working before the guard existed: the earliest time it
-- recorded of each (an open report still standing, a received message, a delivery receipt, a
-- send the manager accepted). An instance with none of these is told at its next open.
INSERT INTO instance_first_connections (instance_id, first_connected_at)
SELECT instance_id, min(at)
  FROM (
    SELECT instance_id, LEAST(reported_at, updated_at) AS at FROM instance_connections WHERE connection_state = 'open'
    UNION ALL SELECT instance_id, min(received_at) FROM inbound_messages GROUP BY instance_id
    UNION ALL SELECT instance_id, min(at) FROM message_receipts GROUP BY instance_id
    UNION ALL SELECT instance_id, min(recorded_at) FROM instance_send_facts WHERE provider_message_id IS NOT NULL GROUP BY instance_id
  ) seen
 GROUP BY instance_id;

-- People who wrote to an instance before the guard existed (as far back as the inbound log keeps).
INSERT INTO instance_known_contacts (instance_id, contact, learned_at)
SELECT instance_id, sender, min(received_at)
  FROM inbound_messages
 WHERE chat = 'direct' AND sender IS NOT NULL
 GROUP BY instance_id, sender;

-- Down Migration
DROP TABLE instance_restriction_signals;
DROP TABLE instance_known_contacts;
DROP TABLE instance_first_connections;
