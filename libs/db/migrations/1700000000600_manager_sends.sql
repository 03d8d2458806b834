-- Up Migration
-- Messages the instance manager reports it sent (its send.message webhooks): what an ambiguous
-- send (timeout, lost connection) is reconciled against, instead of being sent again.
CREATE TABLE manager_sends (
  instance_id          text NOT NULL,
  provider_message_id  text NOT NULL,
  recipient            text NOT NULL,
  message_digest       text NOT NULL,
  seen_at              timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (instance_id, provider_message_id)
);
CREATE INDEX manager_sends_match_idx ON manager_sends (instance_id, recipient, message_digest);
CREATE INDEX deliveries_unknown_idx ON deliveries (updated_at) WHERE state = 'unknown';

-- Down Migration
DROP INDEX deliveries_unknown_idx;
DROP TABLE manager_sends;
