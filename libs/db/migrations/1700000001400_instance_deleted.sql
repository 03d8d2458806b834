-- Up Migration
-- Deleted instances are marked, not removed: the policy log, deliveries, manager sends and the
-- manager's events name an instance by id, and that history outlives the instance
-- (docs/dashboard.md, "Deleting an instance"). A deleted instance is listed nowhere and sends
-- nothing; its name is free again for a new instance of the same customer.
ALTER TABLE instances ADD COLUMN deleted_at timestamptz;
ALTER TABLE instances DROP CONSTRAINT instances_customer_id_name_key;
CREATE UNIQUE INDEX instances_customer_name_live_idx ON instances (customer_id, name) WHERE deleted_at IS NULL;

-- Down Migration
DROP INDEX instances_customer_name_live_idx;
-- Fails while a deleted instance shares its name with a live one: rename or remove it first.
ALTER TABLE instances ADD CONSTRAINT instances_customer_id_name_key UNIQUE (customer_id, name);
ALTER TABLE instances DROP COLUMN deleted_at;
