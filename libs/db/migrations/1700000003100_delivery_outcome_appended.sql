-- Up Migration
-- Who appends a recorded outcome to delivery-events. The delivery stage's outcomes go out with its
-- batch (in the batch's Kafka transaction with KAFKA_EXACTLY_ONCE=transactions), after the row is
-- recorded: a decision redelivered because that batch never committed must append the recorded
-- outcome again. The resolver appends its outcome before its row commits (resolver.ts `settle`):
-- the outcome is on the topic already, and a decision redelivered later (the stage's process
-- was killed mid-send, the resolver settled the send before the restarted process got its
-- partition back) must not append a second copy.
ALTER TABLE deliveries ADD COLUMN outcome_appended boolean NOT NULL DEFAULT false;
COMMENT ON COLUMN deliveries.outcome_appended IS 'true: the outcome was appended to delivery-events before the row committed (the resolver); a redelivered decision re-emits only outcomes not appended';

-- Down Migration
ALTER TABLE deliveries DROP COLUMN outcome_appended;
