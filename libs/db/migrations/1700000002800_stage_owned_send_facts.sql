-- Up Migration
-- Stages talk through events (docs/architecture.md, "Tables and their owners"): no stage reads
-- another stage's tables to do its work. MessageDispatched and DeliveryFailed now carry the
-- recipient, the purpose and the instance name, and each stage keeps what it needs itself.

-- delivery: what it needs of a send, kept from the SendDecided it claimed (and kept after the
-- outcome, unlike dispatch_phone/dispatch_text): the resolver's outcomes carry them, and the
-- resolver's "already attributed" lookup finds the other sends to a recipient without policy_log.
ALTER TABLE deliveries
  ADD COLUMN recipient       text,
  ADD COLUMN message_purpose text,
  ADD COLUMN instance_name   text;
CREATE INDEX deliveries_instance_recipient_idx ON deliveries (instance_id, recipient, created_at)
  WHERE provider_message_id IS NOT NULL;

-- instance-events: its own projection of our sends, written from the outcome events it consumes
-- (MessageDispatched, DeliveryFailed): a manager's ERROR report (messages.update) names only the
-- provider id, and becomes a message.failed naming our message, its recipient and purpose from
-- here; an outcome record written before the events carried these facts finds them here too.
CREATE TABLE instance_send_facts (
  message_id           text PRIMARY KEY,
  instance_id          text NOT NULL,
  customer_id          text NOT NULL,
  recipient            text NOT NULL,
  message_purpose      text NOT NULL,
  instance_name        text NOT NULL,
  -- The manager's id of the message, once it accepted it (MessageDispatched).
  provider_message_id  text,
  recorded_at          timestamptz NOT NULL
);
CREATE INDEX instance_send_facts_provider_idx ON instance_send_facts (instance_id, provider_message_id)
  WHERE provider_message_id IS NOT NULL;

-- One-time backfill, run by the operator's migration (not by a stage): the open and recent sends
-- of deliveries get the facts the decision named, and enter instance-events' projection, so the
-- outcomes, outcome records and ERROR reports of sends made before the upgrade are told like the
-- others. Older sends stay as they are (an ERROR report comes within minutes of a send).
UPDATE deliveries d
   SET recipient = p.recipient, message_purpose = p.message_purpose, instance_name = i.name
  FROM policy_log p JOIN instances i ON i.id = p.instance_id
 WHERE p.message_id = d.message_id
   AND (d.state IN ('dispatching', 'unknown') OR d.created_at > now() - interval '7 days');
INSERT INTO instance_send_facts (message_id, instance_id, customer_id, recipient, message_purpose, instance_name, provider_message_id, recorded_at)
SELECT d.message_id, d.instance_id, d.customer_id, d.recipient, d.message_purpose, d.instance_name, d.provider_message_id, d.updated_at
  FROM deliveries d
 WHERE d.recipient IS NOT NULL
ON CONFLICT DO NOTHING;

-- Down Migration
DROP TABLE instance_send_facts;
DROP INDEX deliveries_instance_recipient_idx;
ALTER TABLE deliveries DROP COLUMN recipient, DROP COLUMN message_purpose, DROP COLUMN instance_name;
