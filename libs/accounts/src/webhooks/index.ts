// Customer webhooks, one endpoint per instance: configure (destination and events, checked
// against the SSRF rules), show, rotate the signing secret, pause and resume, the deliveries log
// with every attempt, resend, and recover from the gateway-events log. gatewayctl (the operator,
// any instance) and the dashboard (a customer, its own instances: CustomerScope) share them.
export { WebhookError, type WebhookRefusal, type WebhookRefusalDetails } from './refusals.ts';
export { EndpointStatus, type CustomerScope } from './endpoint-store.ts';
export { checkWebhookChoice, saveWebhook, setWebhook, type DestinationRules, type SavedWebhook, type SetWebhookInput, type WebhookChoice } from './configure.ts';
export { DELIVERY_STATES, DeliveryState, showWebhook, type WebhookSummary } from './show.ts';
export { pauseWebhook, resumeWebhook, rotateWebhookSecret, type RotateOptions } from './lifecycle.ts';
export { AttemptRow as WebhookAttemptRow, DEFAULT_DELIVERY_LIMIT, listDeliveries, readDeliveries, resendDelivery, type DeliveryScope, type ListDeliveriesInput, type ListedDelivery } from './deliveries.ts';
export { CLOCK_SKEW_MARGIN_MS, recoverDeliveries, type GatewayEventLog, type RecoverDeps, type RecoverInput, type RecoverReport } from './recover.ts';
export { kafkaGatewayEventLog } from './event-log.ts';
