export { sendText, type SendTextRequest, type SendTextResult } from './send-text.ts';
export { ManagerBreakers, type BreakerSettings } from './breaker.ts';
export { createInstance, connectionState, connectInstance, logoutInstance, deleteInstance, setWebhook, ManagerHttpError } from './instances.ts';
export { callManager } from './http.ts';
export { parseJid, phoneOfJid, type Jid } from './jid.ts';
export { envelopeProblem, eventName, MANAGER_TEXT_MAX } from './envelope.ts';
export {
  findMessages,
  type FindMessagesQuery,
  type FindMessagesPage,
  type FindMessagesResult,
  type MessageKey,
  type MessageRecord,
} from './find-messages.ts';
export { findSentMessage, type FindSentMessageRequest, type FindSentMessageResult } from './find-sent-message.ts';
export { candidateJids } from './whatsapp-jids.ts';
