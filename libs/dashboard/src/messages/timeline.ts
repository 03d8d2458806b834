// One message's timeline as the page shows it (message-timeline.eta): the decision with
// every rule, the steps of its delivery in time order (sent, delivered, read, or why not), and
// each webhook delivery that told the customer about it, with its attempts. Pure: the store's
// rows in, the page's data out.
import type { RuleDescription } from '@gw/policy';
import { purposeLabel } from '../messaging-rules.ts';
import type { Timeline } from './store.ts';
import { deliveryStatus, failureDetail, failureWords, receiptStep, ruleRows, type Tone } from './words.ts';
import { utcText } from '../format.ts';

/** A point of the timeline. */
export interface Step {
  key: string;
  /** null: not happened yet (a state that holds now). */
  at: { iso: string; shown: string } | null;
  title: string;
  detail: string | null;
  tone: Tone;
}

const when = (time: Date) => ({ iso: time.toISOString(), shown: utcText(time) });

/** How many characters of the entry hash are shown (the whole is in the policy log export). */
export const SHORT_HASH = 12;

const WEBHOOK_STATES: Record<string, { label: string; tone: Tone }> = {
  pending: { label: 'waiting to be sent', tone: '' },
  in_flight: { label: 'being sent', tone: '' },
  delivered: { label: 'delivered', tone: 'good' },
  failed: { label: 'failed', tone: 'bad' },
};

const ATTEMPT_OUTCOMES: Record<string, string> = {
  delivered: 'delivered',
  retry: 'retry scheduled',
  failed: 'gave up',
  endpoint_disabled: 'webhook disabled',
};

/** What each event tells the receiver, in words. */
const EVENTS: Record<string, string> = {
  'message.sent': 'Message sent',
  'message.failed': 'Message failed',
  'message.delivered': 'Message delivered',
  'message.read': 'Message read',
  'message.status_updated': 'Status update',
};

function deliverySteps(timeline: Timeline): Step[] {
  const { entry, delivery, receipts } = timeline;
  if (entry.decision !== 'accepted') {
    return [{ key: 'not-sent', at: null, title: 'Not sent: refused by policy', detail: 'Nothing was sent to the recipient.', tone: 'bad' }];
  }
  if (!delivery) {
    return [{ key: 'queued', at: null, title: 'Waiting to be sent', detail: 'The gateway has not started sending it yet.', tone: '' }];
  }
  const steps: Step[] = [
    {
      key: 'sending',
      at: when(delivery.created_at),
      title: 'Sending started',
      detail: delivery.attempt > 1 ? `Sent again: attempt ${delivery.attempt}, as the instance did not have it.` : 'Handed to the instance to send.',
      tone: '',
    },
  ];
  switch (delivery.state) {
    case 'dispatched':
      steps.push({
        key: 'sent',
        at: when(delivery.updated_at),
        title: 'Sent',
        detail: delivery.provider_message_id ? `The instance sent it to the chat network (its id there: ${delivery.provider_message_id}).` : 'The instance sent it to the chat network.',
        tone: 'good',
      });
      break;
    case 'failed': {
      const detail = failureDetail(delivery.failure_reason, delivery.failure_detail);
      steps.push({ key: 'failed', at: when(delivery.updated_at), title: `Failed: ${failureWords(delivery.failure_reason)}`, detail: detail ? `Recorded: ${detail}.` : null, tone: 'bad' });
      break;
    }
    case 'unknown':
      steps.push({ key: 'checking', at: null, title: 'Sending…', detail: 'The instance has not confirmed it yet. The gateway is asking whether it was sent, and sends it again if not.', tone: '' });
      break;
    default:
      steps.push({ key: 'waiting', at: null, title: 'Sending…', detail: 'Waiting for the instance to confirm.', tone: '' });
  }
  for (const receipt of [...receipts].sort((a, b) => a.at.getTime() - b.at.getTime())) {
    const step = receiptStep(receipt.status);
    steps.push({ key: `receipt-${receipt.status}`, at: when(receipt.at), title: step.title, detail: null, tone: step.tone });
  }
  return steps;
}

function webhookViews(timeline: Timeline) {
  return timeline.webhooks.map((w) => {
    const state = WEBHOOK_STATES[w.state] ?? { label: w.state, tone: '' as Tone };
    return {
      id: w.delivery_id,
      event: w.event,
      eventLabel: EVENTS[w.event] ?? w.event,
      state: w.state,
      stateLabel: state.label,
      tone: state.tone,
      occurred: when(w.occurred_at),
      due: w.state === 'pending' ? utcText(w.next_attempt_at) : null,
      attempts: timeline.attempts
        .filter((a) => a.delivery_id === w.delivery_id)
        .map((a) => ({
          attempt: a.attempt,
          at: when(a.attempted_at),
          answer: a.status_code !== null ? `HTTP ${a.status_code}` : 'no answer',
          good: a.status_code !== null && a.status_code >= 200 && a.status_code < 300,
          error: a.error,
          latency: `${a.latency_ms.toLocaleString('en-US')} ms`,
          outcome: ATTEMPT_OUTCOMES[a.outcome] ?? a.outcome,
          retryAt: a.outcome === 'retry' && a.next_attempt_at ? utcText(a.next_attempt_at) : null,
        })),
    };
  });
}

export function timelineView(timeline: Timeline, described: readonly RuleDescription[]) {
  const { entry, delivery, receipts } = timeline;
  const accepted = entry.decision === 'accepted';
  const rules = ruleRows(entry.reasons, described);
  const decided: Step = {
    key: 'decided',
    at: when(entry.decided_at),
    title: accepted ? 'Requested, and accepted by the messaging policy' : 'Requested, and refused by the messaging policy',
    detail: accepted ? `All ${rules.length} rules passed.` : `${entry.error_code ?? 'refused'}: ${entry.error_message ?? 'refused by the policy'}`,
    tone: accepted ? 'good' : 'bad',
  };
  return {
    message: {
      id: entry.message_id,
      logId: entry.log_id,
      recipient: entry.recipient,
      purpose: entry.message_purpose,
      purposeLabel: purposeLabel(entry.message_purpose),
      instance: {
        id: entry.instance_id,
        name: entry.instance_name,
        deleted: entry.instance_deleted,
        // The webhook tab: where deliveries are resent (not for a deleted instance, which has no page).
        webhookTab: entry.instance_name !== null && !entry.instance_deleted ? `/instances/${encodeURIComponent(entry.instance_id)}/manage?tab=webhook` : null,
      },
      policyVersion: entry.policy_version,
      entryHash: entry.entry_hash,
      shortHash: entry.entry_hash.slice(0, SHORT_HASH),
      decidedAt: when(entry.decided_at),
    },
    decision: { accepted, code: entry.error_code, message: entry.error_message },
    status: deliveryStatus({ decision: entry.decision, state: delivery?.state ?? null, failureReason: delivery?.failure_reason ?? null, receipts: receipts.map((r) => r.status) }),
    rules,
    steps: [decided, ...deliverySteps(timeline)],
    webhooks: webhookViews(timeline),
  };
}

export type TimelineView = ReturnType<typeof timelineView>;
