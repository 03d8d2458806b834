import { EventEmitter } from 'node:events';
import type { ConnectionState, LedgerEntry, SimInstance } from './types.ts';

// The seam for later issues: webhooks (Evolution envelope), delivery/read acks, the
// phone page... subscribe here instead of being called from route handlers.
// Event names follow Evolution's webhook events (lower-case, dotted).

export interface SimEventMap {
  'instance.create': [instance: SimInstance];
  'instance.delete': [instance: SimInstance];
  'qrcode.updated': [instance: SimInstance];
  'connection.update': [instance: SimInstance, previous: ConnectionState];
  'send.message': [instance: SimInstance, entry: LedgerEntry, response: SendTextResponse];
}

export interface SendTextResponse {
  key: { remoteJid: string; fromMe: true; id: string };
  pushName?: string;
  status: 'PENDING';
  message: { conversation: string };
  contextInfo?: unknown;
  messageType: 'conversation';
  messageTimestamp: number;
  instanceId: string;
  source: string;
}

export type SimEvents = EventEmitter<SimEventMap>;

export function createSimEvents(): SimEvents {
  return new EventEmitter<SimEventMap>();
}
