// The search of /messages, read from its query string: a message id, a log id, a recipient's
// phone (whole, or some of its digits), a time range (UTC; the last 7 days unless given, or any
// time when searching by an id) and the decision. Every value is checked here and explained in
// words; nothing reaches Postgres unchecked. Pure.
import { normalizePhone } from '@gw/contract';
import { DECISIONS, parseUtc, single as singleValue, type DecisionFilter } from '../query-values.ts';

const DAY_MS = 86_400_000;

/** The last page of results a link may ask for (the search's own bound, below the counted tables' MAX_PAGE: an offset beyond it would only cost the database). */
export const MAX_SEARCH_PAGE = 2_000;
/** How far back the results reach when no time is given. */
export const DEFAULT_DAYS = 7;
/** At least this many digits for a search by part of a number. */
export const MIN_PHONE_DIGITS = 3;


/** The form's fields as typed (shown again in the form). */
export interface SearchForm {
  message_id: string;
  log_id: string;
  phone: string;
  from: string;
  to: string;
  decision: DecisionFilter;
}

export interface MessageSearch {
  messageId: string | null;
  logId: number | null;
  /** A recipient: equal to `exact` (the number in E.164, when it is one) or containing `digits`. */
  phone: { exact: string | null; digits: string } | null;
  /** Inclusive lower bound; null: any time. */
  from: Date | null;
  /** Exclusive upper bound; null: up to now. */
  before: Date | null;
  /** True when `from` is the default (the last DEFAULT_DAYS days), not typed. */
  defaultRange: boolean;
  decision: DecisionFilter;
  page: number;
  /** A search by an exact id: one message found opens its timeline. */
  byId: boolean;
}

export type SearchResult = { ok: true; search: MessageSearch; form: SearchForm } | { ok: false; errors: string[]; form: SearchForm };

/** A query value as one trimmed string ('' when absent); a problem refuses the search (400). */
const single = (raw: Record<string, unknown>, key: string, label: string, max: number, errors: string[]) => singleValue(raw, key, label, errors, { max, ignored: false });

/** Reads the search from the query string; `now` is the request's time (the default range ends there). */
export function parseSearch(raw: Record<string, unknown>, now: Date): SearchResult {
  const errors: string[] = [];
  const messageId = single(raw, 'message_id', 'The message id', 200, errors);
  const logIdText = single(raw, 'log_id', 'The log id', 20, errors);
  const phoneText = single(raw, 'phone', 'The phone number', 40, errors);
  const fromText = single(raw, 'from', 'The “from” time', 40, errors);
  const toText = single(raw, 'to', 'The “to” time', 40, errors);
  const decisionText = single(raw, 'decision', 'The decision', 20, errors);
  const pageText = single(raw, 'page', 'The page', 10, errors);
  const decision = (DECISIONS as readonly string[]).includes(decisionText) ? (decisionText as DecisionFilter) : 'all';
  const form: SearchForm = { message_id: messageId, log_id: logIdText, phone: phoneText, from: fromText, to: toText, decision };

  if (decisionText !== '' && decision !== decisionText) errors.push('Choose the decision from the list: all, accepted or refused.');

  let logId: number | null = null;
  if (logIdText !== '') {
    if (/^\d{1,15}$/.test(logIdText) && Number(logIdText) > 0) logId = Number(logIdText);
    else errors.push(`The log id is a whole number, as the API answered it (e.g. 1042); “${logIdText}” is not.`);
  }

  let phone: MessageSearch['phone'] = null;
  if (phoneText !== '') {
    const digits = phoneText.replace(/[\s().+-]/g, '');
    if (!/^\d+$/.test(digits)) errors.push('The phone number may hold digits, spaces, “+”, brackets and dashes only.');
    else if (digits.length < MIN_PHONE_DIGITS) errors.push(`Type at least ${MIN_PHONE_DIGITS} digits of the phone number.`);
    else phone = { exact: normalizePhone(phoneText), digits };
  }

  const time = (text: string, label: string) => {
    if (text === '') return null;
    const parsed = parseUtc(text);
    if (!parsed) errors.push(`${label} “${text}” is not a date and time: write it as YYYY-MM-DD or YYYY-MM-DD HH:MM (UTC).`);
    return parsed;
  };
  const from = time(fromText, 'The “from” time');
  const to = time(toText, 'The “to” time');
  const before = to ? new Date(to.at.getTime() + to.step) : null;
  if (from && before && from.at >= before) errors.push('The “from” time is after the “to” time.');

  let page = 1;
  if (pageText !== '') {
    if (/^\d{1,6}$/.test(pageText) && Number(pageText) >= 1 && Number(pageText) <= MAX_SEARCH_PAGE) page = Number(pageText);
    else errors.push(`The page is a number from 1 to ${MAX_SEARCH_PAGE}.`);
  }

  if (errors.length > 0) return { ok: false, errors, form };
  const byId = messageId !== '' || logId !== null;
  // An id names one message whenever it was sent; other searches look at the last days unless told.
  const defaultRange = !from && !before && !byId;
  return {
    ok: true,
    form,
    search: {
      messageId: messageId || null,
      logId,
      phone,
      from: from ? from.at : defaultRange ? new Date(now.getTime() - DEFAULT_DAYS * DAY_MS) : null,
      before,
      defaultRange,
      decision,
      page,
      byId,
    },
  };
}

/** The link to another page of the same search. */
export function pageLink(form: SearchForm, page: number): string {
  const params = new URLSearchParams();
  for (const key of ['message_id', 'log_id', 'phone', 'from', 'to'] as const) if (form[key] !== '') params.set(key, form[key]);
  if (form.decision !== 'all') params.set('decision', form.decision);
  if (page > 1) params.set('page', String(page));
  const query = params.toString();
  return query ? `/messages?${query}` : '/messages';
}
