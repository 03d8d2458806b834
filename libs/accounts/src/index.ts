// Account operations shared by the operator CLI (gatewayctl) and the API: customers, API keys,
// instances, their event webhook, PBX integrations, customer webhooks (webhooks/) and requests
// for higher limits. Refusals are AccountErrors, whose message may be shown to whoever asked.
export { AccountError, type AccountErrorCode } from './errors.ts';
export { kafkaAuditTrail, toAccountChanged, type AccountChange, type AuditTrail } from './audit.ts';
export { createCustomer, planChange, requireCustomer, type FactAppender } from './customers.ts';
export { API_KEY_USE_PRECISION_MS, createApiKey, listApiKeys, recordApiKeyUse, revokeApiKey } from './api-keys.ts';
export {
  createInstance,
  getInstanceForCustomer,
  instanceStatus,
  InstanceOwner,
  listInstances,
  openManagedInstance,
  type CreateInstanceInput,
  type InstanceSummary,
  type ManagedInstance,
} from './instances.ts';
export { INSTANCE_WEBHOOK_EVENTS, setInstanceWebhook } from './instance-webhook.ts';
export { deleteInstance } from './instance-delete.ts';
export { createPbx, disablePbx, listPbxIntegrations, pbxModuleEnabled, rotatePbxSecret, setPbxTemplate, type CreatePbxInput, type PbxIntegrationSummary, type PbxScope } from './pbx.ts';
export * from './webhooks/index.ts';
export {
  decideLimitRequest,
  getLimitRequest,
  LIMIT_REQUEST_MAX,
  LIMIT_REQUEST_STATUSES,
  LIMIT_REQUEST_TEXT_MAX,
  listLimitRequests,
  requestLimits,
  type LimitDecision,
  type LimitRequest,
  type LimitRequestInput,
  type LimitRequestStatus,
} from './limit-requests.ts';
