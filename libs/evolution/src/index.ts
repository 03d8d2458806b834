export { sendText, type SendTextRequest, type SendTextResult } from './send-text.ts';
export { ManagerBreakers, type BreakerSettings } from './breaker.ts';
export {
  createInstance,
  connectionState,
  connectInstance,
  logoutInstance,
  waitUntilClosed,
  restartPairing,
  deleteInstance,
  setWebhook,
  ManagerHttpError,
  LICENSE_REQUIRED_WORDS,
  CONNECT_DELAY_MS,
  type CreatedInstance,
  type CreateInstanceOptions,
  type ManagerErrorCode,
  type Pairing,
} from './instances.ts';
export { callManager, isLicenseRequired, onManagerLicenseRequired } from './http.ts';
export { JidParseCache, parseJid, phoneOfJid, type Jid } from './jid.ts';
export { envelopeProblem, eventName, MANAGER_TEXT_MAX, withoutBinaryFields } from './envelope.ts';
export { canonicalLid, identityOf, isCanonicalLid, type Identity } from './identity.ts';
export {
  findMessages,
  type FindMessagesQuery,
  type FindMessagesPage,
  type FindMessagesResult,
  type MessageKey,
  type MessageRecord,
} from './find-messages.ts';
export { findSentMessage, storeHolds, type FindSentMessageRequest, type FindSentMessageResult, type StoreHoldsRequest } from './find-sent-message.ts';
export { candidateJids } from './whatsapp-jids.ts';
