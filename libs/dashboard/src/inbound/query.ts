// The query string of /inbound-logs (search, filters, one message by id, newer/older pages) and
// the words its table uses. The shared readers (days, single values) are ../query-values.ts.
import { dayRange, oneOf, single, type DayRange, type RawQuery } from '../query-values.ts';

export const CHATS = ['all', 'direct', 'group'] as const;
export type ChatFilter = (typeof CHATS)[number];
export const FLAGS = ['all', 'flagged', 'opt_out', 'opt_in'] as const;
export type FlagFilter = (typeof FLAGS)[number];

/** A place in the log, newest first: a received time to the microsecond and the message id. */
export interface Cursor {
  at: string;
  id: string;
}

const CURSOR_TIME = /^(\d{4}-\d{2}-\d{2})T(\d{2}):(\d{2}):(\d{2})\.\d{6}Z$/;
const MESSAGE_ID = /^[A-Za-z0-9_.:-]{1,100}$/;

/** `<time>_<id>` as the page's links write it; null when it is not one (a time Postgres would refuse included). */
export function parseCursor(value: string): Cursor | null {
  const split = value.indexOf('_');
  if (split < 0) return null;
  const at = value.slice(0, split);
  const id = value.slice(split + 1);
  const match = CURSOR_TIME.exec(at);
  if (!match || !MESSAGE_ID.test(id)) return null;
  const [hours, minutes, seconds] = [Number(match[2]), Number(match[3]), Number(match[4])];
  // The date must be one of the calendar (Date would roll 02-30 over into March).
  if (Number(at.slice(0, 4)) < 1970 || hours > 23 || minutes > 59 || seconds > 59 || new Date(`${match[1]}T00:00:00Z`).toISOString().slice(0, 10) !== match[1]) return null;
  return { at, id };
}

export const cursorText = (cursor: Cursor) => `${cursor.at}_${cursor.id}`;

export interface InboundQuery {
  /** Free text looked for in the sender and the message text ('' for none). */
  q: string;
  /** One of the customer's instance ids, or ''. */
  instance: string;
  chat: ChatFilter;
  flag: FlagFilter;
  days: DayRange;
  /** One message, by its id ('' for the list). */
  id: string;
  /** Older than this place (the next page), or newer than it (the previous page). */
  before: Cursor | null;
  after: Cursor | null;
  problems: string[];
}

/** Reads the query; `instanceIds` are the customer's own (any other is ignored, said so). */
export function parseInboundQuery(raw: RawQuery, instanceIds: ReadonlySet<string>): InboundQuery {
  const problems: string[] = [];
  const q = single(raw, 'q', 'The search text', problems);
  let instance = single(raw, 'instance', 'The instance', problems);
  if (instance !== '' && !instanceIds.has(instance)) {
    problems.push('The instance chosen is not one of yours; messages of every instance are shown.');
    instance = '';
  }
  const chat = oneOf(raw, 'chat', 'The chat kind', CHATS, problems);
  const flag = oneOf(raw, 'flag', 'The flag', FLAGS, problems);
  const days = dayRange(raw, problems);
  let id = single(raw, 'id', 'The message id', problems);
  if (id !== '' && !MESSAGE_ID.test(id)) {
    problems.push('The message id is not one the gateway gives; the whole log is shown.');
    id = '';
  }
  const cursor = (key: string) => {
    const value = single(raw, key, 'The page', problems);
    if (value === '') return null;
    const parsed = parseCursor(value);
    if (!parsed) problems.push('The page asked for is not understood; the newest messages are shown.');
    return parsed;
  };
  const before = cursor('before');
  const after = before ? null : cursor('after');
  return { q, instance, chat, flag, days, id, before, after, problems };
}

/** The filters as query values, for links that keep them (newer/older pages). */
export const inboundFilterValues = (q: InboundQuery) => ({
  q: q.q,
  instance: q.instance,
  chat: q.chat === 'all' ? '' : q.chat,
  flag: q.flag === 'all' ? '' : q.flag,
  from: q.days.from,
  to: q.days.to,
});

/** What the flag column says for each opt_action. */
export const FLAG_LABELS: Record<string, string> = {
  opt_out: 'Opted out (keyword)',
  opt_in: 'Opted back in',
  flagged: 'Possible opt-out request — review',
};
export const flagLabel = (optAction: string | null) => (optAction ? (FLAG_LABELS[optAction] ?? optAction) : '');

/** The chat: a 1:1 chat, or the group with its id. */
export const chatLabel = (chat: string, groupId: string | null) => (chat === 'group' ? `Group ${groupId ?? '(unknown id)'}` : '1:1');
