export { sendText, type SendTextRequest, type SendTextResult } from './send-text.ts';
export { ManagerBreakers, type BreakerSettings } from './breaker.ts';
export { createInstance, connectionState, connectInstance, logoutInstance, deleteInstance, setWebhook } from './instances.ts';
export { callManager } from './http.ts';
