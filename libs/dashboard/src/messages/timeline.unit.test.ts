import { describe, expect, it } from 'vitest';
import { describeRules } from '@gw/policy';
import type { Timeline } from './store.ts';
import { timelineView } from './timeline.ts';

// One message's story in time order, from its rows.
const at = (s: string) => new Date(`2026-03-10T12:${s}.000Z`);
const entry: Timeline['entry'] = {
  log_id: 7,
  message_id: 'msg_1',
  instance_id: 'ins_1',
  instance_name: 'front-desk',
  instance_deleted: false,
  recipient: '+14155552671',
  message_purpose: 'transactional',
  decision: 'accepted',
  error_code: null,
  error_message: null,
  reasons: [{ rule: 'module_enabled', outcome: 'pass', detail: '{"module":"api"}' }],
  policy_version: 'v1',
  decided_at: at('00:00'),
  entry_hash: 'abcdef0123456789abcdef',
};
const delivery: NonNullable<Timeline['delivery']> = {
  instance_id: 'ins_1',
  state: 'dispatched',
  provider_message_id: 'PROV1',
  failure_reason: null,
  failure_detail: null,
  attempt: 1,
  created_at: at('00:01'),
  updated_at: at('00:02'),
};
const described = describeRules();

describe('timelineView', () => {
  it('an accepted message: decided, sending, sent, then each receipt in time order', () => {
    const view = timelineView({ entry, delivery, receipts: [{ status: 'read', at: at('00:09') }, { status: 'delivered', at: at('00:05') }], webhooks: [], attempts: [] }, described);
    expect(view.steps.map((s) => [s.key, s.at?.shown ?? null])).toEqual([
      ['decided', '2026-03-10 12:00:00 UTC'],
      ['sending', '2026-03-10 12:00:01 UTC'],
      ['sent', '2026-03-10 12:00:02 UTC'],
      ['receipt-delivered', '2026-03-10 12:00:05 UTC'],
      ['receipt-read', '2026-03-10 12:00:09 UTC'],
    ]);
    expect(view.status).toMatchObject({ key: 'read', label: 'Read' });
    expect(view.message).toMatchObject({ shortHash: 'abcdef012345', purposeLabel: 'Transactional', instance: { webhookTab: '/instances/ins_1/manage?tab=webhook' } });
  });

  it('a refused message: the code and message, then "not sent"', () => {
    const refused = { ...entry, decision: 'rejected', error_code: 'recipient_suppressed', error_message: 'The recipient is suppressed for this account.' };
    const view = timelineView({ entry: refused, delivery: null, receipts: [], webhooks: [], attempts: [] }, described);
    expect(view.steps.map((s) => [s.title, s.detail])).toEqual([
      ['Requested, and refused by the messaging policy', 'recipient_suppressed: The recipient is suppressed for this account.'],
      ['Not sent: refused by policy', 'Nothing was sent to the recipient.'],
    ]);
  });

  it('a failed send says why, without the instance\'s answer body', () => {
    const failed = { ...delivery, state: 'failed', provider_message_id: null, failure_reason: 'manager_rejected', failure_detail: 'manager answered 422: {"text":"secret"}' };
    const view = timelineView({ entry, delivery: failed, receipts: [], webhooks: [], attempts: [] }, described);
    expect(view.steps.at(-1)).toMatchObject({ title: 'Failed: the instance refused the message', detail: 'Recorded: manager answered 422.', tone: 'bad' });
    expect(JSON.stringify(view)).not.toContain('secret');
  });

  it('each webhook delivery with its attempts in order; no resend link for a deleted instance', () => {
    const view = timelineView(
      {
        entry: { ...entry, instance_deleted: true },
        delivery,
        receipts: [],
        webhooks: [{ delivery_id: 'whd_1', instance_id: 'ins_1', event: 'message.sent', state: 'delivered', occurred_at: at('00:03'), next_attempt_at: at('00:03') }],
        attempts: [
          { delivery_id: 'whd_1', attempt: 1, attempted_at: at('00:03'), status_code: 500, latency_ms: 1200, error: 'http_500', outcome: 'retry', next_attempt_at: at('00:33') },
          { delivery_id: 'whd_1', attempt: 2, attempted_at: at('00:33'), status_code: 200, latency_ms: 40, error: null, outcome: 'delivered', next_attempt_at: null },
        ],
      },
      described,
    );
    expect(view.webhooks[0]).toMatchObject({ eventLabel: 'Message sent', stateLabel: 'delivered', tone: 'good' });
    expect(view.webhooks[0]!.attempts).toEqual([
      expect.objectContaining({ attempt: 1, answer: 'HTTP 500', good: false, latency: '1,200 ms', outcome: 'retry scheduled', retryAt: '2026-03-10 12:00:33 UTC', error: 'http_500' }),
      expect.objectContaining({ attempt: 2, answer: 'HTTP 200', good: true, latency: '40 ms', outcome: 'delivered', retryAt: null }),
    ]);
    expect(view.message.instance.webhookTab).toBeNull();
  });
});
