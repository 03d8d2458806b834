import { describe, expect, it } from 'vitest';
import { describeRules } from '@gw/policy';
import { deliveryStatus, failureDetail, failureWords, readableKey, readableMs, receiptStep, ruleDetails, ruleRows } from './words.ts';
import { utcText } from '../format.ts';

// A message's state in a word or two, and every rule of a decision in readable form.
const sent = (receipts: string[] = []) => ({ decision: 'accepted', state: 'dispatched', failureReason: null, receipts });

describe('deliveryStatus', () => {
  it('reads the furthest the message got: read, then delivered, then sent', () => {
    expect(deliveryStatus(sent())).toEqual({ key: 'sent', label: 'Sent', tone: 'good' });
    expect(deliveryStatus(sent(['sent', 'delivered']))).toMatchObject({ key: 'delivered', label: 'Delivered' });
    expect(deliveryStatus(sent(['delivered', 'read']))).toMatchObject({ key: 'read', label: 'Read' });
    expect(deliveryStatus(sent(['played']))).toMatchObject({ key: 'read', label: 'Read' });
    expect(deliveryStatus(sent(['failed']))).toEqual({ key: 'failed', label: 'Failed: the chat network could not deliver it', tone: 'bad' });
  });

  it('says sending while the outcome is open, and why a send failed', () => {
    expect(deliveryStatus({ decision: 'accepted', state: 'dispatching', failureReason: null, receipts: [] })).toMatchObject({ key: 'sending', label: 'Sending…' });
    expect(deliveryStatus({ decision: 'accepted', state: 'unknown', failureReason: null, receipts: [] })).toMatchObject({ key: 'sending', label: 'Sending…' });
    expect(deliveryStatus({ decision: 'accepted', state: 'failed', failureReason: 'unknown_number', receipts: [] })).toEqual({
      key: 'failed',
      label: 'Failed: the number is not on the chat network',
      tone: 'bad',
    });
    expect(deliveryStatus({ decision: 'accepted', state: null, failureReason: null, receipts: [] })).toMatchObject({ key: 'queued', label: 'Waiting to be sent' });
  });

  it('a refused message was not sent, whatever else is known', () => {
    expect(deliveryStatus({ decision: 'rejected', state: null, failureReason: null, receipts: [] })).toEqual({ key: 'refused', label: 'Not sent (refused)', tone: 'bad' });
  });
});

describe('failures', () => {
  it('names each reason the delivery stage records in words, and an unknown one by its code', () => {
    for (const reason of ['unknown_number', 'manager_rejected', 'manager_error', 'manager_unavailable', 'circuit_open', 'no_ack', 'not_accepted']) {
      expect(failureWords(reason)).not.toContain('_');
    }
    expect(failureWords('no_ack')).toBe('the instance did not confirm the message in time');
    expect(failureWords('brand_new_reason')).toBe('brand new reason');
    expect(failureWords(null)).toBe('no reason was recorded');
  });

  it('shows the instance\'s refusal without its answer body, which may repeat the text', () => {
    expect(failureDetail('manager_rejected', 'manager answered 400: {"text":"Your code is 123456"}')).toBe('manager answered 400');
    expect(failureDetail('manager_unavailable', 'manager unreachable (ECONNREFUSED)')).toBe('manager unreachable (ECONNREFUSED)');
    expect(failureDetail('no_ack', null)).toBeNull();
  });

  it('names each receipt', () => {
    expect(receiptStep('delivered').title).toBe('Delivered to the recipient’s phone');
    expect(receiptStep('read').title).toBe('Read by the recipient');
    expect(receiptStep('odd')).toEqual({ title: 'Status reported: odd', tone: '' });
  });
});

describe('rule details', () => {
  it('reads keys and values as words: times in UTC, durations, codes, lists', () => {
    expect(readableKey('retry_after_ms')).toBe('Retry after');
    expect(readableKey('valid_until')).toBe('Valid until');
    expect(readableMs(3_600_000)).toBe('1 hour');
    expect(readableMs(4_500)).toBe('4.5 seconds');
    expect(readableMs(250)).toBe('250 ms');
    expect(utcText(new Date('2026-01-31T12:00:05.123Z'))).toBe('2026-01-31 12:00:05 UTC');
    const { details, raw } = ruleDetails(
      JSON.stringify({ rule: 'velocity', control: 'instance_token_bucket', controls: ['instance_token_bucket', 'recipient_interval'], retry_after_ms: 30_000, burst: 1200, resets_at: '2026-11-23T00:00:00.000Z', ok: true, none: null }),
    );
    expect(raw).toBeNull();
    expect(details).toEqual([
      { label: 'Control', value: 'instance token bucket' },
      { label: 'Controls', value: 'instance token bucket, recipient interval' },
      { label: 'Retry after', value: '30 seconds' },
      { label: 'Burst', value: '1,200' },
      { label: 'Resets at', value: '2026-11-23 00:00:00 UTC' },
      { label: 'Ok', value: 'yes' },
      { label: 'None', value: 'none' },
    ]);
  });

  it('names a content category in its own words', () => {
    expect(ruleDetails(JSON.stringify({ reason: 'promotional_content', score: 4 })).details[0]!.value).toMatch(/^Marketing and promotions/);
  });

  it('shows a detail that is not a JSON object as it is, and nothing for none', () => {
    expect(ruleDetails('not json')).toEqual({ details: [], raw: 'not json' });
    expect(ruleDetails('[1,2]')).toEqual({ details: [], raw: '[1,2]' });
    expect(ruleDetails(null)).toEqual({ details: [], raw: null });
  });

  it('lists every rule of the reasons in order, with what it checks (describeRules) and its result', () => {
    const described = describeRules();
    const reasons = [
      { rule: 'module_enabled', outcome: 'pass', detail: '{"module":"api"}' },
      { rule: 'recipient_not_suppressed', outcome: 'fail', detail: '{"rule":"recipient_not_suppressed","source":"opt_out","sources":["opt_out"],"suppressed_at":"2026-01-02T03:04:05.000Z"}' },
      { rule: 'instance_not_paused', outcome: 'skipped', detail: null },
      { rule: 'retired_rule', outcome: 'pass', detail: null },
      'not an entry',
    ];
    const rows = ruleRows(reasons, described);
    expect(rows.map((r) => [r.rule, r.result.label])).toEqual([
      ['module_enabled', 'Passed'],
      ['recipient_not_suppressed', 'Refused the message'],
      ['instance_not_paused', 'Not checked'],
      ['retired_rule', 'Passed'],
    ]);
    expect(rows[0]!.summary).toBe(described.find((d) => d.name === 'module_enabled')!.summary);
    expect(rows[1]!.details).toEqual([
      { label: 'Source', value: 'opt out' },
      { label: 'Sources', value: 'opt out' },
      { label: 'Suppressed at', value: '2026-01-02 03:04:05 UTC' },
    ]);
    expect(rows[3]!.summary).toBeNull();
    expect(ruleRows({ not: 'an array' }, described)).toEqual([]);
  });
});
