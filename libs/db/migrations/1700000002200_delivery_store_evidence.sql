-- Up Migration
-- A send whose outcome is unknown is sent again only when the manager's store is known to keep
-- sent messages: the resolver asks it for the newest message the instance is known to have sent
-- (services/delivery/src/resolve/store-evidence.ts). This finds that message without a scan.
CREATE INDEX deliveries_instance_sent_idx ON deliveries (instance_id, updated_at DESC)
  WHERE state = 'dispatched' AND provider_message_id IS NOT NULL;

-- Down Migration
DROP INDEX deliveries_instance_sent_idx;
