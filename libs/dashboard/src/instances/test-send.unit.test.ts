import { describe, expect, it } from 'vitest';
import { accepted, delivered, failedDelivery, NO_ANSWER, rejected } from '../../../../test/support/api/fake-replies.ts';
import { checkTestSend, testSendOutcome } from './test-send.ts';

// The outcome of a test send reads as the API's answer (toResponse) would, with the rules beside it.
const call = { commandId: 'cmd_1', deadlineMs: 1000, options: {} };
const ids = { commandId: 'cmd_1', messageId: 'msg_1' };

describe('testSendOutcome', () => {
  it('sent, queued (accepted, delivery under way), refused, failed, and not decided by the deadline', async () => {
    expect(testSendOutcome(delivered(call), ids)).toMatchObject({ status: 'sent', code: null, log_id: 7001, decision: 'accepted', message_id: 'msg_of_cmd_1' });
    expect(testSendOutcome(accepted(call), ids)).toMatchObject({ status: 'queued', code: null, log_id: 7001 });
    const refused = testSendOutcome(await rejected('recipient_suppressed', 'Opted out.', { rule: 'recipient_not_suppressed' })(call), ids);
    expect(refused).toMatchObject({ status: 'refused', code: 'recipient_suppressed', message: 'Opted out.', log_id: 7001, decision: 'rejected', policy_version: 'test-policy' });
    expect(refused.rules).toEqual([
      { rule: 'purpose_allowed', outcome: 'pass', detail: null },
      { rule: 'recipient_not_suppressed', outcome: 'fail', detail: '{"rule":"recipient_not_suppressed"}' },
    ]);
    expect(testSendOutcome(failedDelivery(call), ids)).toMatchObject({ status: 'failed', code: 'gateway_send_failed', log_id: 7001, decision: 'accepted' });
    expect(testSendOutcome(await NO_ANSWER(call), ids)).toEqual({ status: 'undecided', code: 'internal_error', message: expect.any(String), log_id: null, message_id: 'msg_1', decision: null, policy_version: null, rules: [] });
  });
});

describe('checkTestSend', () => {
  it('normalises the phone and refuses what the API refuses, with its codes', () => {
    expect(checkTestSend({ phone: ' +1 (415) 555-2671 ', message: 'Hi', purpose: 'support' })).toEqual({ phone: '+14155552671', message: 'Hi', purpose: 'support' });
    expect(checkTestSend({ phone: 'call me', message: 'Hi', purpose: 'support' })).toMatchObject({ code: 'validation_error' });
    expect(checkTestSend({ phone: '+14155552671', message: '', purpose: 'support' })).toMatchObject({ code: 'validation_error' });
    expect(checkTestSend({ phone: '+14155552671', message: 'a\u0000b', purpose: 'support' })).toMatchObject({ code: 'validation_error', message: 'The message contains a NUL character.' });
    expect(checkTestSend({ phone: '+14155552671', message: 'Hi', purpose: '' })).toMatchObject({ code: 'message_purpose_required' });
    expect(checkTestSend({ phone: '+14155552671', message: 'Hi', purpose: 'marketing' })).toMatchObject({ code: 'message_purpose_not_allowed' });
  });
});
