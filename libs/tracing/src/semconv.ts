// Attribute names of the OpenTelemetry semantic conventions. The HTTP, server, error and service
// ones are stable and come from the package; the messaging ones are still "incubating" there,
// and OpenTelemetry advises copying incubating names rather than importing them (they may change
// in a minor release), so the few used here are written out, as of semantic conventions 1.45.
export {
  ATTR_ERROR_TYPE,
  ATTR_HTTP_REQUEST_METHOD,
  ATTR_HTTP_RESPONSE_STATUS_CODE,
  ATTR_HTTP_ROUTE,
  ATTR_SERVER_ADDRESS,
  ATTR_SERVER_PORT,
  ATTR_SERVICE_NAME,
  ATTR_URL_SCHEME,
} from '@opentelemetry/semantic-conventions';

export const ATTR_MESSAGING_SYSTEM = 'messaging.system';
export const ATTR_MESSAGING_OPERATION_TYPE = 'messaging.operation.type';
export const ATTR_MESSAGING_OPERATION_NAME = 'messaging.operation.name';
export const ATTR_MESSAGING_DESTINATION_NAME = 'messaging.destination.name';
export const ATTR_MESSAGING_DESTINATION_PARTITION_ID = 'messaging.destination.partition.id';
export const ATTR_MESSAGING_CONSUMER_GROUP_NAME = 'messaging.consumer.group.name';
export const ATTR_MESSAGING_KAFKA_OFFSET = 'messaging.kafka.offset';
export const ATTR_MESSAGING_KAFKA_MESSAGE_KEY = 'messaging.kafka.message.key';
export const ATTR_MESSAGING_MESSAGE_ID = 'messaging.message.id';
/** "Sometimes called correlation id": the command id every event of one send carries. */
export const ATTR_MESSAGING_MESSAGE_CONVERSATION_ID = 'messaging.message.conversation_id';
export const ATTR_URL_TEMPLATE = 'url.template';

/**
 * The gateway's own attributes. Ids and outcomes only: never a phone number, a message text or a
 * secret (docs/architecture.md "Traces").
 */
export const ATTR_GATEWAY_CUSTOMER_ID = 'gateway.customer_id';
export const ATTR_GATEWAY_MESSAGE_ID = 'gateway.message_id';
export const ATTR_GATEWAY_EVENT_TYPE = 'gateway.event_type';
/** What a stage made of the event: a decision (accepted, rejected), a delivery result, a webhook attempt's outcome. */
export const ATTR_GATEWAY_OUTCOME = 'gateway.outcome';
export const ATTR_GATEWAY_ERROR_CODE = 'gateway.error_code';
export const ATTR_GATEWAY_WEBHOOK_DELIVERY_ID = 'gateway.webhook.delivery_id';
export const ATTR_GATEWAY_WEBHOOK_EVENT = 'gateway.webhook.event';
export const ATTR_GATEWAY_WEBHOOK_ATTEMPT = 'gateway.webhook.attempt';
