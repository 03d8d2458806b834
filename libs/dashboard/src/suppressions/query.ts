// Reading the query string of the operations views (/suppressed-recipients and its CSV,
// /inbound-logs): every value is checked here, in words a person understands. A value that is not
// understood is left out of the search and named in a notice on the page (the CSV export refuses
// it instead, so a file never holds more than was asked for); nothing here ever reaches Postgres
// unchecked (no NUL, no impossible date, no unbounded number).
import { isLinkedId } from '@gw/policy';
import { MAX_PAGE } from '../pager.ts';
import { dayRange, oneOf, phoneDigits, single, type DayRange, type RawQuery } from '../query-values.ts';

export { containsPattern, dayRange, hrefWith, oneOf, parseDay, phoneDigits, single, type DayRange, type RawQuery } from '../query-values.ts';


/** A page number from 1 to MAX_PAGE (absent: 1). */
export function pageNumber(raw: RawQuery, key: string, label: string, problems: string[]): number {
  const value = single(raw, key, label, problems);
  if (value === '') return 1;
  if (/^\d{1,6}$/.test(value)) {
    const page = Number(value);
    if (page >= 1 && page <= MAX_PAGE) return page;
  }
  problems.push(`${label} “${value}” is not a page number from 1 to ${MAX_PAGE}; the first page is shown.`);
  return 1;
}

// ---------------------------------------------------------------------------------------------
// /suppressed-recipients

export const SOURCES = ['all', 'opt_out', 'manual'] as const;
export type SourceFilter = (typeof SOURCES)[number];

export interface SuppressionQuery {
  source: SourceFilter;
  /** Digits the recipient contains ('' for any). */
  phone: string;
  days: DayRange;
  /** The page of the current list, and of the history. */
  page: number;
  historyPage: number;
  /** A number to fill the add form with (?add=, e.g. from a flagged inbound message), and the lift form (?lift=). */
  add: string;
  lift: string;
  /** What was not understood, in words; those values are ignored. */
  problems: string[];
}

export function parseSuppressionQuery(raw: RawQuery): SuppressionQuery {
  const problems: string[] = [];
  const source = oneOf(raw, 'source', 'The source', SOURCES, problems);
  const typed = single(raw, 'phone', 'The phone number', problems);
  let phone = '';
  if (typed !== '') {
    const digits = phoneDigits(typed);
    if (digits) phone = digits;
    else problems.push(`The phone number search “${typed}” is not part of a phone number (digits only); it is ignored.`);
  }
  const days = dayRange(raw, problems);
  const page = pageNumber(raw, 'page', 'The page', problems);
  const historyPage = pageNumber(raw, 'hpage', 'The history page', problems);
  // Prefills only: shown in a form field (escaped), checked when the form is sent.
  const add = single(raw, 'add', 'The number to add', problems).slice(0, 40);
  const lift = single(raw, 'lift', 'The number to lift', problems).slice(0, 40);
  return { source, phone, days, page, historyPage, add, lift, problems };
}

/** The filters as query values, for links that keep them (pages, the CSV export). */
export const suppressionFilterValues = (q: Pick<SuppressionQuery, 'source' | 'phone' | 'days'>) => ({
  source: q.source === 'all' ? '' : q.source,
  phone: q.phone,
  from: q.days.from,
  to: q.days.to,
});

/** What each kind of suppression is called on the page and in the export. */
export const SOURCE_LABELS: Record<string, string> = { opt_out: 'Opted out', manual: 'Manual' };
export const sourceLabel = (source: string) => SOURCE_LABELS[source] ?? source;

/** The keyword of an opt-out or opt-back reason (`keyword:STOP`), or null. */
export const keywordOf = (reason: string) => (reason.startsWith('keyword:') && reason.length > 8 ? reason.slice(8) : null);

/** A reason in words: a keyword reply says so; a reason a person wrote is shown as written. */
export function reasonText(source: string, reason: string): string {
  const keyword = source === 'opt_out' ? keywordOf(reason) : null;
  return keyword ? `Replied “${keyword}”` : reason;
}

/** Who made a change (the pages write "by …"): opt-outs and opt-backs are the recipient's own. */
export const byText = (by: string) => (by === 'recipient' ? 'the recipient' : by);

/** Words for a list of keywords: "START, UNSTOP or YES". */
export function orList(words: readonly string[]): string {
  if (words.length <= 1) return words[0] ?? '';
  return `${words.slice(0, -1).join(', ')} or ${words[words.length - 1]}`;
}

/**
 * A linked id (`<digits>@lid`): a sender WhatsApp showed without their number. The page shortens
 * it to its first digits, which is enough to tell two apart and to search for it.
 */
export const isLinkedIdRecipient = (recipient: string) => isLinkedId(recipient);
export const linkedIdText = (lid: string) => `Linked id ${lid.slice(0, 4)}…@lid`;

/**
 * A suppressed recipient in words: a number as it is; a linked id with the number once known
 * (`linkedNumber` undefined: not asked, as in the history, where the number has its own row).
 */
export function recipientText(recipient: string, linkedNumber?: string | null): string {
  if (!isLinkedIdRecipient(recipient)) return recipient;
  if (linkedNumber === undefined) return linkedIdText(recipient);
  return `${linkedIdText(recipient)}, ${linkedNumber ? `number ${linkedNumber}` : 'number not known yet'}`;
}

/** What one history row says happened. */
export function historyLabel(action: string, source: string, reason: string): string {
  const keyword = keywordOf(reason);
  if (source === 'opt_out') {
    if (action === 'suppressed') return keyword ? `Opted out by replying ${keyword}` : 'Opted out';
    return keyword ? `Opted back in by replying ${keyword}` : 'Opted back in';
  }
  if (source === 'manual') return action === 'suppressed' ? 'Suppressed manually' : 'Manual suppression lifted';
  return `${action} (${source})`;
}

/**
 * A CSV cell a spreadsheet would read as a formula (=, +, -, @, a tab or CR first) gets a leading
 * apostrophe. Only for free text (reasons, who, message texts, names): a message someone sent the
 * customer must not become a formula in the customer's spreadsheet. Phone numbers and times are
 * written as they are.
 */
export const spreadsheetSafe = (value: string | null | undefined) => (value && /^[=+\-@\t\r]/.test(value) ? `'${value}` : (value ?? ''));
