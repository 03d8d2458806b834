-- Up Migration
-- The policy consumer's state of a customer is its last snapshot (policy_state) plus the events
-- folded since (policy_state_tail, oldest first), folded again on load with the engine's pure
-- evolve. A batch of sends appends its events here (about a kilobyte each) instead of rewriting
-- the customer's whole state, which for a busy customer is hundreds of kilobytes (its day of
-- sends and its contacts): JSON-encoded and parsed on every batch, that was the policy stage's
-- largest cost per send (issue 28). A snapshot is written every POLICY_SNAPSHOT_EVERY_EVENTS
-- events, and whenever a batch folds anything but a send, a delivery outcome or a learned
-- contact (a plan, a module, a suppression: what readers of policy_state alone look at), and it
-- deletes the customer's tail in the same statement. docs/decisions.md "Policy state snapshots".
CREATE TABLE policy_state_tail (
  customer_id text NOT NULL,
  -- Increasing in the order the batches were written: one writer per partition, each batch
  -- fenced on the one before it, and a customer's records all on one partition.
  seq bigint GENERATED ALWAYS AS IDENTITY,
  -- The engine's events folded for this customer in one batch, in order (a JSON array of PolicyEvent).
  events json NOT NULL,
  PRIMARY KEY (customer_id, seq)
);
COMMENT ON TABLE policy_state_tail IS 'Events folded into a customer''s policy state since its snapshot in policy_state; state = fold(snapshot, tail in seq order)';

-- Down Migration
DROP TABLE policy_state_tail;
