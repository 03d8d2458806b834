export { createLogger, type Logger } from './logger.ts';
export { createMetrics, type ServiceMetrics } from './metrics.ts';
export { opsPlugin, type Readiness, type OpsPluginOptions } from './ops-plugin.ts';
export { maskPhone, maskPhones, describeError } from './redact.ts';
