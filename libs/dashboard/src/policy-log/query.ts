// The filters of /policy-log and of its export, read from the query string. Every value is checked
// here and explained in words a person understands; a value not understood is left out of the list
// and named in a notice on the page (the export refuses it instead, so a file never holds more than
// was asked for). Nothing reaches Postgres unchecked. Pure.
import type { PolicyLogFilter } from '@gw/compliance';
import { MAX_PAGE } from '../pager.ts';
import { DECISIONS, parseUtc, phoneDigits, single, type DecisionFilter, type RawQuery } from '../query-values.ts';

export { hrefWith, type RawQuery } from '../query-values.ts';


/** One of the customer's instances, as the instance filter offers it. */
export interface InstanceChoice {
  id: string;
  name: string;
  deleted: boolean;
}

/** The filters as typed (shown again in the form, and kept by the links). */
export interface FilterForm {
  decision: DecisionFilter;
  code: string;
  purpose: string;
  instance: string;
  recipient: string;
  from: string;
  to: string;
}

export interface PolicyLogQuery {
  form: FilterForm;
  /** The filter for the list, its count and the export (without the customer, which the route adds). */
  filter: Omit<PolicyLogFilter, 'customerId'>;
  page: number;
  /** What was not understood, in words; those values are ignored. */
  problems: string[];
  /** Whether any filter applies. */
  filtered: boolean;
}

/** Error codes and purposes as the gateway writes them: lower case, digits and underscores. */
const CODE_LIKE = /^[a-z][a-z0-9_]{0,63}$/;

/**
 * Reads the filters and the page. `instances` are the customer's own (deleted ones too): an
 * instance filter naming another is not understood (as an unknown one).
 */
export function parsePolicyLogQuery(raw: RawQuery, instances: readonly InstanceChoice[]): PolicyLogQuery {
  const problems: string[] = [];
  const decisionText = single(raw, 'decision', 'The decision', problems);
  let decision: DecisionFilter = 'all';
  if (decisionText !== '') {
    if ((DECISIONS as readonly string[]).includes(decisionText)) decision = decisionText as DecisionFilter;
    else problems.push(`The decision “${decisionText}” is not one of the choices (all, accepted, refused); all are shown.`);
  }

  let code = single(raw, 'code', 'The refusal code', problems);
  if (code !== '' && !CODE_LIKE.test(code)) {
    problems.push(`The refusal code “${code}” is not a code (e.g. recipient_suppressed); it is ignored.`);
    code = '';
  }
  let purpose = single(raw, 'purpose', 'The purpose', problems);
  if (purpose !== '' && !CODE_LIKE.test(purpose)) {
    problems.push(`The purpose “${purpose}” is not a purpose (e.g. transactional); it is ignored.`);
    purpose = '';
  }
  let instance = single(raw, 'instance', 'The instance', problems);
  if (instance !== '' && !instances.some((i) => i.id === instance)) {
    problems.push(`The instance “${instance}” is not one of your instances; it is ignored.`);
    instance = '';
  }

  let recipient = single(raw, 'recipient', 'The recipient', problems);
  let digits: string | null = null;
  if (recipient !== '') {
    digits = phoneDigits(recipient);
    if (!digits) {
      problems.push(`The recipient search “${recipient}” is not part of a phone number (digits only); it is ignored.`);
      recipient = '';
    }
  }

  const time = (key: string, label: string) => {
    const text = single(raw, key, label, problems);
    if (text === '') return { text, parsed: null };
    const parsed = parseUtc(text);
    if (!parsed) {
      problems.push(`${label} “${text}” is not a date and time (write YYYY-MM-DD or YYYY-MM-DD HH:MM, in UTC); it is ignored.`);
      return { text: '', parsed: null };
    }
    return { text, parsed };
  };
  let from = time('from', 'The “from” time');
  let to = time('to', 'The “to” time');
  const fromAt = from.parsed?.at ?? null;
  let before = to.parsed ? new Date(to.parsed.at.getTime() + to.parsed.step) : null;
  if (fromAt && before && fromAt >= before) {
    problems.push('The “from” time is after the “to” time; both are ignored.');
    from = { text: '', parsed: null };
    to = { text: '', parsed: null };
    before = null;
  }

  const pageText = single(raw, 'page', 'The page', problems);
  let page = 1;
  if (pageText !== '') {
    if (/^\d{1,6}$/.test(pageText) && Number(pageText) >= 1 && Number(pageText) <= MAX_PAGE) page = Number(pageText);
    else problems.push(`The page “${pageText}” is not a page number from 1 to ${MAX_PAGE}; the first page is shown.`);
  }

  const form: FilterForm = { decision, code, purpose, instance, recipient, from: from.text, to: to.text };
  const filter: PolicyLogQuery['filter'] = {
    decision: decision === 'accepted' ? 'accepted' : decision === 'refused' ? 'rejected' : null,
    errorCode: code || null,
    purpose: purpose || null,
    instanceId: instance || null,
    recipientDigits: digits,
    from: from.parsed ? fromAt : null,
    to: before,
  };
  const filtered = Object.values(filter).some((v) => v !== null);
  return { form, filter, page, problems, filtered };
}

/** The filters as query values, for the links that keep them (pages, the export). */
export const filterValues = (form: FilterForm) => ({
  decision: form.decision === 'all' ? '' : form.decision,
  code: form.code,
  purpose: form.purpose,
  instance: form.instance,
  recipient: form.recipient,
  from: form.from,
  to: form.to,
});

/** A link to `path` with these query values; empty values are left out. */

/** The export's format, from ?format= (null: absent or not one of them). */
export function exportFormat(raw: RawQuery): 'csv' | 'ndjson' | null {
  const value = raw.format;
  return value === 'csv' || value === 'ndjson' ? value : null;
}


/** The name of a downloaded file: policy-log-<UTC date and time>.<ext> (colons left out, for every file system). */
export const downloadName = (kind: 'policy-log' | 'policy-log-verification', now: Date, ext: string) =>
  `${kind}-${now.toISOString().slice(0, 19).replace(/:/g, '').replace('T', '-')}Z.${ext}`;
