import { callManager } from './http.ts';

// POST /chat/findMessages/{instance} of the Evolution API v2: a page of the instance's stored
// messages (sent and received), newest first. Shapes follow BaileysStartupService.fetchMessages
// (src/api/integrations/channel/whatsapp/whatsapp.baileys.service.ts) and Query
// (src/api/repository/repository.service.ts) of EvolutionAPI/evolution-api.

export interface MessageKey {
  remoteJid: string;
  fromMe: boolean;
  /** The WhatsApp message id: what sendText answered as key.id. */
  id: string;
  participant?: string;
  remoteJidAlt?: string;
}

/** One stored message, as fetchMessages selects it. */
export interface MessageRecord {
  /** The manager's row id, not the WhatsApp message id. */
  id: string;
  key: MessageKey;
  pushName: string | null;
  messageType: string;
  /** e.g. `{conversation: text}`. */
  message: Record<string, unknown> | null;
  /** Seconds. */
  messageTimestamp: number;
  instanceId: string;
  source: string;
  contextInfo: unknown;
  MessageUpdate: { status: string }[];
}

export interface FindMessagesQuery {
  where?: {
    /** The manager's row id. */
    id?: string;
    source?: string;
    messageType?: string;
    /**
     * Dates (ISO strings); the manager compares them in seconds and filters only when both
     * bounds are given.
     */
    messageTimestamp?: { gte: string; lte: string };
    /** Each field filters only when truthy: `fromMe: false` selects everything. */
    key?: { id?: string; fromMe?: boolean; remoteJid?: string; participant?: string; remoteJidAlt?: string };
  };
  /** 1-based; default 1. */
  page?: number;
  /** The page size (Evolution's name); default 50. */
  offset?: number;
}

export interface FindMessagesPage {
  total: number;
  pages: number;
  currentPage: number;
  records: MessageRecord[];
}

export type FindMessagesResult =
  | { kind: 'page'; page: FindMessagesPage }
  /** No usable answer: non-200, unexpected body, timeout or network error. `detail` never echoes the body. */
  | { kind: 'failed'; detail: string };

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

function isRecord(value: unknown): value is MessageRecord {
  return isObject(value) && isObject(value.key) && typeof value.messageTimestamp === 'number';
}

function parsePage(body: unknown): FindMessagesPage | null {
  const messages = isObject(body) ? body.messages : undefined;
  if (!isObject(messages) || !Array.isArray(messages.records) || !messages.records.every(isRecord)) return null;
  return {
    total: Number(messages.total) || 0,
    pages: Number(messages.pages) || 0,
    currentPage: Number(messages.currentPage) || 1,
    records: messages.records,
  };
}

export async function findMessages(
  managerUrl: string,
  apiKey: string,
  instance: string,
  query: FindMessagesQuery,
  timeoutMs: number,
): Promise<FindMessagesResult> {
  const url = `${managerUrl.replace(/\/+$/, '')}/chat/findMessages/${encodeURIComponent(instance)}`;
  try {
    // The body is not summarised into the detail: a manager's error text can quote the query.
    const { status, body } = await callManager('POST', url, apiKey, timeoutMs, query, { route: '/chat/findMessages/{instance}' });
    if (status !== 200) return { kind: 'failed', detail: `manager answered ${status} to findMessages` };
    const page = parsePage(body);
    if (!page) return { kind: 'failed', detail: 'manager answered findMessages with an unexpected body' };
    return { kind: 'page', page };
  } catch (error) {
    const code = (error as { code?: string }).code;
    return { kind: 'failed', detail: `no answer from the manager to findMessages (${code || 'error'})` };
  }
}
