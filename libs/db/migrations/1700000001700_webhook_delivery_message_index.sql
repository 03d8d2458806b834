-- Up Migration
-- The message timeline of the dashboard (/messages/:messageId) finds, within one customer:
--  * the policy-log entry of a message by its message_id (also what the instance-events service
--    looks up for each delivery outcome and failed receipt, by message_id alone);
--  * the webhook deliveries that name the message in their JSON body: message.sent and
--    message.failed by `message_id`, and the receipts (message.delivered, message.read,
--    message.status_updated, and message.failed from a receipt) by `external_message_id`, the
--    chat network's id of the message on its instance (deliveries.provider_message_id).
-- The body is text; `body::jsonb` is immutable (jsonb_in), so it may be indexed. Every writer of
-- webhook_deliveries (the webhooks service's enqueue stage and recover) stores a gateway event's
-- payload, which is JSON.stringify output, so the cast cannot fail on a real row; the indexes are
-- partial, on the message events only, so an insert of any other event never parses its body.
-- The timeline's queries (services/api/src/dashboard/messages/store.ts) repeat these expressions
-- and predicates exactly, so the planner uses them.
CREATE INDEX policy_log_message_idx ON policy_log (message_id);
CREATE INDEX webhook_deliveries_message_idx ON webhook_deliveries (customer_id, ((body::jsonb) ->> 'message_id'))
  WHERE event IN ('message.sent', 'message.failed');
CREATE INDEX webhook_deliveries_external_message_idx ON webhook_deliveries (instance_id, ((body::jsonb) ->> 'external_message_id'))
  WHERE event IN ('message.delivered', 'message.read', 'message.status_updated', 'message.failed');

-- Down Migration
DROP INDEX webhook_deliveries_external_message_idx;
DROP INDEX webhook_deliveries_message_idx;
DROP INDEX policy_log_message_idx;
