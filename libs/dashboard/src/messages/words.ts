// What a message's states and rules read as on the messages pages: the delivery state in a word
// or two ("Read", "Delivered", "Failed: …"), the words for each failure reason the delivery
// stage records, and every rule of a decision's `reasons` with its result and details in
// readable form. Pure: the routes' rows in, words out.
import type { RuleDescription } from '@gw/policy';
import { categoryLabel, duration, purposeLabel } from '../messaging-rules.ts';
import { utcText } from '../format.ts';
import type { ResultRow } from './store.ts';

export type Tone = 'good' | 'bad' | '';

/** A state as the pages show it. */
export interface Label {
  /** A stable key (data attribute, tests). */
  key: string;
  label: string;
  tone: Tone;
}

/**
 * Why a send failed, by the reason the delivery stage records (libs/evolution sendText, the
 * resolver's no_ack, not_accepted and outcome_unknown). Anything else shows as its code in words.
 */
const FAILURES: Record<string, string> = {
  unknown_number: 'the number is not on the chat network',
  manager_rejected: 'the instance refused the message',
  manager_error: 'the instance had an error',
  manager_unavailable: 'the instance could not be reached',
  circuit_open: 'the instance was failing, so sending was held back',
  no_ack: 'the instance did not confirm the message in time',
  not_accepted: 'the instance did not take the message after several tries',
  outcome_unknown: 'the instance did not confirm the message; it may or may not have been delivered',
  // A receipt of the chat network (ERROR ack) after the message was sent.
  network_error: 'the chat network could not deliver it',
};

export const failureWords = (reason: string | null): string => (reason ? (FAILURES[reason] ?? reason.replace(/_/g, ' ')) : 'no reason was recorded');

/**
 * The detail the delivery stage recorded with a failure, as the page may show it. A refusal by
 * the instance (manager_rejected) records the instance's answer, which may repeat what was sent
 * (the text): only its first part ("manager answered 400") is shown.
 */
export function failureDetail(reason: string | null, detail: string | null): string | null {
  if (!detail) return null;
  if (reason === 'manager_rejected') return detail.split(':')[0]!.trim() || null;
  return detail;
}

/** What the delivery of one message says now (the search results' "Delivery" column and the timeline's summary). */
export interface DeliveryFacts {
  decision: string;
  /** deliveries.state, or null when there is no deliveries row (yet). */
  state: string | null;
  failureReason: string | null;
  /** The message_receipts statuses of the sent message (delivered, read, played, failed, sent). */
  receipts: readonly string[];
}

export function deliveryStatus(facts: DeliveryFacts): Label {
  if (facts.decision !== 'accepted') return { key: 'refused', label: 'Not sent (refused)', tone: 'bad' };
  switch (facts.state) {
    case null:
      return { key: 'queued', label: 'Waiting to be sent', tone: '' };
    case 'dispatching':
    case 'unknown':
      return { key: 'sending', label: 'Sending…', tone: '' };
    case 'failed':
      return { key: 'failed', label: `Failed: ${failureWords(facts.failureReason)}`, tone: 'bad' };
    case 'dispatched': {
      const has = (status: string) => facts.receipts.includes(status);
      if (has('read') || has('played')) return { key: 'read', label: 'Read', tone: 'good' };
      if (has('delivered')) return { key: 'delivered', label: 'Delivered', tone: 'good' };
      if (has('failed')) return { key: 'failed', label: `Failed: ${failureWords('network_error')}`, tone: 'bad' };
      return { key: 'sent', label: 'Sent', tone: 'good' };
    }
    default:
      return { key: facts.state, label: facts.state, tone: '' };
  }
}

/** A receipt of the chat network as a step of the timeline. */
const RECEIPTS: Record<string, { title: string; tone: Tone }> = {
  sent: { title: 'Reached the chat network', tone: 'good' },
  delivered: { title: 'Delivered to the recipient’s phone', tone: 'good' },
  read: { title: 'Read by the recipient', tone: 'good' },
  played: { title: 'Played by the recipient (voice message)', tone: 'good' },
  failed: { title: `Failed: ${FAILURES.network_error}`, tone: 'bad' },
};

export const receiptStep = (status: string) => RECEIPTS[status] ?? { title: `Status reported: ${status}`, tone: '' as Tone };

/** A rule's result in words. */
const RESULTS: Record<string, Label> = {
  pass: { key: 'pass', label: 'Passed', tone: 'good' },
  fail: { key: 'fail', label: 'Refused the message', tone: 'bad' },
  skipped: { key: 'skipped', label: 'Not checked', tone: '' },
};

export interface RuleDetail {
  label: string;
  value: string;
}

export interface RuleRow {
  rule: string;
  /** What the rule checks (describeRules, as the responsible-messaging page and gatewayctl say it); null for a rule this policy no longer runs. */
  summary: string | null;
  result: Label;
  /** The rule's details, each as "label: value". */
  details: RuleDetail[];
  /** The detail as recorded, when it is not a JSON object (shown as it is). */
  raw: string | null;
}

const ISO_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;
/** Values that are codes: shown in words (a content category in its own words). */
const CODED = new Set(['reason', 'source', 'sources', 'control', 'controls']);

/** 4500 → "4.5 seconds"; exact units as the public pages write them ("1 hour"). */
export function readableMs(ms: number): string {
  if (ms < 1000) return `${ms} ms`;
  const exact = duration(ms);
  if (!exact.endsWith(' ms')) return exact;
  return `${(ms / 1000).toFixed(1)} seconds`;
}

function readableValue(key: string, value: unknown): string {
  if (value === null || value === undefined) return 'none';
  if (Array.isArray(value)) return value.length === 0 ? 'none' : value.map((v) => readableValue(key, v)).join(', ');
  if (typeof value === 'boolean') return value ? 'yes' : 'no';
  if (typeof value === 'number') return key.endsWith('_ms') ? readableMs(value) : value.toLocaleString('en-US');
  if (typeof value === 'string') {
    if (ISO_TIME.test(value)) return utcText(new Date(value));
    return CODED.has(key) ? categoryLabel(value) : value;
  }
  return JSON.stringify(value);
}

/** "retry_after_ms" → "Retry after"; "valid_until" → "Valid until". */
export function readableKey(key: string): string {
  const words = key.replace(/_ms$/, '').replace(/_/g, ' ');
  return words.charAt(0).toUpperCase() + words.slice(1);
}

/**
 * A rule's recorded detail (JSON object text: the rule's details; for the rule that refused, the
 * decision's details, which repeat the rule's name) as label/value pairs.
 */
export function ruleDetails(detail: unknown): { details: RuleDetail[]; raw: string | null } {
  if (detail === null || detail === undefined || detail === '') return { details: [], raw: null };
  let parsed: unknown = detail;
  if (typeof detail === 'string') {
    try {
      parsed = JSON.parse(detail);
    } catch {
      return { details: [], raw: detail };
    }
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return { details: [], raw: typeof detail === 'string' ? detail : JSON.stringify(detail) };
  const details = Object.entries(parsed as Record<string, unknown>)
    .filter(([key]) => key !== 'rule')
    .map(([key, value]) => ({ label: readableKey(key), value: readableValue(key, value) }));
  return { details, raw: null };
}

/**
 * Every rule of a decision's `reasons` (policy_log.reasons: [{ rule, outcome, detail }], in the
 * order the engine ran them), with what it checks. Anything that is not such an entry is skipped.
 */
export function ruleRows(reasons: unknown, described: readonly RuleDescription[]): RuleRow[] {
  if (!Array.isArray(reasons)) return [];
  const summaries = new Map(described.map((d) => [d.name, d.summary]));
  return reasons.flatMap((entry): RuleRow[] => {
    if (typeof entry !== 'object' || entry === null) return [];
    const { rule, outcome, detail, details } = entry as { rule?: unknown; outcome?: unknown; detail?: unknown; details?: unknown };
    if (typeof rule !== 'string') return [];
    const result = RESULTS[String(outcome)] ?? { key: String(outcome), label: String(outcome), tone: '' as Tone };
    return [{ rule, summary: summaries.get(rule) ?? null, result, ...ruleDetails(detail ?? details) }];
  });
}

/** A row of the search's results, as the page lists it. */
export const resultView = (row: ResultRow) => ({
  logId: row.log_id,
  messageId: row.message_id,
  href: `/messages/${encodeURIComponent(row.message_id)}`,
  recipient: row.recipient,
  purpose: purposeLabel(row.message_purpose),
  accepted: row.decision === 'accepted',
  code: row.error_code,
  why: row.error_message,
  decided: { iso: row.decided_at.toISOString(), shown: utcText(row.decided_at) },
  delivery: deliveryStatus({ decision: row.decision, state: row.delivery_state, failureReason: row.failure_reason, receipts: row.receipts }),
});
