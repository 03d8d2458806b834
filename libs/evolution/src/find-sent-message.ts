import { findMessages, type MessageRecord } from './find-messages.ts';
import { candidateJids } from './whatsapp-jids.ts';

// Did the manager send this message after all? After an ambiguous sendText (the process died or
// the answer never came), the manager's message store is the evidence: a message of ours
// (fromMe) to that phone, with exactly that text, stored within the time of the attempt.

export interface FindSentMessageRequest {
  managerUrl: string;
  apiKey: string;
  instance: string;
  /** E.164, as given to sendText. */
  phone: string;
  text: string;
  /** When the send attempt started / ended (ms since epoch). */
  sinceMs: number;
  untilMs: number;
  /** Provider message ids already attributed to other messages: never matched again. */
  excludeIds?: Iterable<string>;
  /** Budget of the whole lookup (every page of every JID form), not of one request. */
  timeoutMs: number;
}

export type FindSentMessageResult =
  | { kind: 'found'; providerMessageId: string }
  | { kind: 'absent' }
  /** The store could not be read completely; nothing can be concluded. `detail` names neither phone nor text. */
  | { kind: 'unreachable'; detail: string };

/** Clocks of gateway and manager differ; the manager stamps the message when it sends it. */
const CLOCK_SKEW_MS = 2_000;
const PAGE_SIZE = 50;
/** Per JID form. Past it the window holds more of our messages to one phone than plausible. */
const MAX_PAGES = 20;

/** The text of a stored text message: prepareMessage turns extendedTextMessage into conversation, but not always did. */
function textOf(record: MessageRecord): string | undefined {
  const message = record.message ?? {};
  if (typeof message.conversation === 'string') return message.conversation;
  const extended = message.extendedTextMessage as { text?: unknown } | undefined;
  return typeof extended?.text === 'string' ? extended.text : undefined;
}

type PagesOutcome = { kind: 'read'; matches: MessageRecord[] } | { kind: 'unreachable'; detail: string };

/** Every page of our messages to `remoteJid` in the window, keeping the records that match. */
async function matchingRecords(
  req: FindSentMessageRequest,
  remoteJid: string,
  deadline: number,
  isMatch: (record: MessageRecord) => boolean,
): Promise<PagesOutcome> {
  const matches: MessageRecord[] = [];
  const window = {
    gte: new Date(req.sinceMs - CLOCK_SKEW_MS).toISOString(),
    lte: new Date(req.untilMs + CLOCK_SKEW_MS).toISOString(),
  };
  for (let page = 1; page <= MAX_PAGES; page++) {
    const remainingMs = deadline - Date.now();
    if (remainingMs <= 0) return { kind: 'unreachable', detail: 'findMessages lookup ran out of time' };
    const answer = await findMessages(
      req.managerUrl,
      req.apiKey,
      req.instance,
      { where: { key: { remoteJid, fromMe: true }, messageTimestamp: window }, page, offset: PAGE_SIZE },
      remainingMs,
    );
    if (answer.kind === 'failed') return { kind: 'unreachable', detail: answer.detail };
    matches.push(...answer.page.records.filter(isMatch));
    if (page >= answer.page.pages || answer.page.records.length === 0) return { kind: 'read', matches };
  }
  return { kind: 'unreachable', detail: `more than ${MAX_PAGES} pages of messages in the window` };
}

/**
 * Looks for the message in the manager's store. The oldest match wins (pages come newest
 * first; among equal seconds, the one read last), so repeated lookups with the winners in
 * `excludeIds` attribute identical texts to their sends in order.
 */
export async function findSentMessage(req: FindSentMessageRequest): Promise<FindSentMessageResult> {
  const deadline = Date.now() + req.timeoutMs;
  const excluded = new Set(req.excludeIds ?? []);
  const isMatch = (record: MessageRecord) =>
    record.key.fromMe === true && typeof record.key.id === 'string' && !excluded.has(record.key.id) && textOf(record) === req.text;

  let oldest: MessageRecord | undefined;
  for (const remoteJid of candidateJids(req.phone)) {
    const outcome = await matchingRecords(req, remoteJid, deadline, isMatch);
    if (outcome.kind === 'unreachable') return outcome;
    for (const record of outcome.matches) {
      if (!oldest || record.messageTimestamp <= oldest.messageTimestamp) oldest = record;
    }
  }
  return oldest ? { kind: 'found', providerMessageId: oldest.key.id } : { kind: 'absent' };
}

export interface StoreHoldsRequest {
  managerUrl: string;
  apiKey: string;
  instance: string;
  /** key.id of a message the manager is known to have sent (its sendText answered with it, or its store showed it). */
  providerMessageId: string;
  timeoutMs: number;
}

/**
 * Whether the manager's store keeps the messages it sends: does it hold one it is known to have
 * sent? Evolution stores a sent message before answering sendText, and only with
 * DATABASE_SAVE_DATA_NEW_MESSAGE on (whatsapp.baileys.service.ts sendMessageWithTyping); with it
 * off findMessages answers 200 with no records, which reads like an absence. So an absence proves
 * nothing unless the store is known to be on. One page of one record, by key.id.
 */
export async function storeHolds(req: StoreHoldsRequest): Promise<{ kind: 'held' } | { kind: 'not_held' } | { kind: 'unreachable'; detail: string }> {
  const answer = await findMessages(req.managerUrl, req.apiKey, req.instance, { where: { key: { id: req.providerMessageId, fromMe: true } }, page: 1, offset: 1 }, req.timeoutMs);
  if (answer.kind === 'failed') return { kind: 'unreachable', detail: answer.detail };
  return answer.page.records.some((r) => r.key.id === req.providerMessageId) ? { kind: 'held' } : { kind: 'not_held' };
}
