import { describe, expect, it } from 'vitest';
import { ApiError } from '@gw/contract';
import type { DeliveryFailed, MessageDispatched, SendDecided } from '@gw/events';
import { isFinal, toResponse, type SendProgress } from './outcome.ts';

const ids = { commandId: 'cmd_1', messageId: 'msg_1' };

function decided(overrides: Partial<SendDecided> = {}): SendDecided {
  return {
    event_id: 'evt_1',
    correlation_id: 'cmd_1',
    occurred_at: 1,
    customer_id: 'cus_1',
    instance_id: 'ins_1',
    message_id: 'msg_1',
    log_id: 41,
    decision: 'accepted',
    error_code: null,
    error_message: null,
    reasons: [{ rule: 'purpose_allowed', outcome: 'pass', detail: null }],
    policy_version: 'policy-7',
    recipient: '+14155552671',
    message_purpose: 'transactional',
    message_digest: 'digest',
    dispatch: null,
    partition_chain: 0,
    prev_hash: '',
    entry_hash: '',
    ...overrides,
  };
}

const rejected = (overrides: Partial<SendDecided>) => decided({ decision: 'rejected', ...overrides });

/** What the delivery stage copies from the decision onto its outcome. */
const named = { recipient: '+14155552671', message_purpose: 'transactional', instance_name: 'front' };

const dispatched = (): SendProgress['delivery'] => ({
  type: 'MessageDispatched',
  payload: { event_id: 'evt_2', correlation_id: 'cmd_1', occurred_at: 2, customer_id: 'cus_1', instance_id: 'ins_1', message_id: 'msg_1', log_id: 41, provider_message_id: 'p1', provider_status: 'PENDING', ...named } satisfies MessageDispatched,
});

const failed = (definitive: boolean): SendProgress['delivery'] => ({
  type: 'DeliveryFailed',
  payload: { event_id: 'evt_3', correlation_id: 'cmd_1', occurred_at: 3, customer_id: 'cus_1', instance_id: 'ins_1', message_id: 'msg_1', log_id: 41, reason: 'unknown_number', detail: 'not on the network', definitive, ...named } satisfies DeliveryFailed,
});

/** The body and status an answer goes out with. */
function answer(result: ReturnType<typeof toResponse>): { status: number; body: Record<string, unknown> } {
  return result instanceof ApiError ? { status: result.status, body: { ...result.toBody() } } : { status: 200, body: { ...result } };
}

describe('toResponse', () => {
  it('a dispatched message is sent, whatever the decision says', () => {
    expect(answer(toResponse({ decision: decided(), delivery: dispatched() }, ids))).toEqual({
      status: 200,
      body: { success: true, status: 'sent', message_id: 'msg_1', log_id: 41 },
    });
    expect(answer(toResponse({ decision: null, delivery: dispatched() }, ids)).body).toMatchObject({ status: 'sent' });
  });

  it('a failure that is not definitive (no acknowledgement) is queued, never failed', () => {
    expect(answer(toResponse({ decision: decided(), delivery: failed(false) }, ids))).toEqual({
      status: 200,
      body: { success: true, status: 'queued', message_id: 'msg_1', log_id: 41 },
    });
  });

  it('a send whose outcome is unknown (outcome_unknown, not definitive) is 502 gateway_send_failed saying it may or may not have been delivered', () => {
    const unknown = { ...failed(false)!, payload: { ...(failed(false)!.payload as DeliveryFailed), reason: 'outcome_unknown', detail: 'cannot tell' } } as SendProgress['delivery'];
    const { status, body } = answer(toResponse({ decision: decided(), delivery: unknown }, ids));
    expect(status).toBe(502);
    expect(body).toMatchObject({ success: false, error: 'gateway_send_failed', details: { reason: 'outcome_unknown', message_id: 'msg_1', log_id: 41 } });
    expect(body.message).toMatch(/may or may not have been delivered/);
  });

  it('a definitive failure is 502 gateway_send_failed with its reason and ids', () => {
    expect(answer(toResponse({ decision: decided(), delivery: failed(true) }, ids))).toEqual({
      status: 502,
      body: {
        success: false,
        error: 'gateway_send_failed',
        message: 'The message passed the responsible-messaging checks but could not be delivered through the instance.',
        details: { reason: 'unknown_number', detail: 'not on the network', message_id: 'msg_1', log_id: 41 },
      },
    });
  });

  it('a rejection answers with the policy\'s code, status and message, the failed rule\'s details and the log entry', () => {
    const decision = rejected({
      error_code: 'recipient_suppressed',
      error_message: 'This recipient opted out.',
      reasons: [
        { rule: 'purpose_allowed', outcome: 'pass', detail: '{"ignored":true}' },
        { rule: 'recipient_not_suppressed', outcome: 'fail', detail: '{"rule":"recipient_not_suppressed","source":"opt_out"}' },
      ],
    });
    expect(answer(toResponse({ decision, delivery: null }, ids))).toEqual({
      status: 403,
      body: {
        success: false,
        error: 'recipient_suppressed',
        message: 'This recipient opted out.',
        details: { rule: 'recipient_not_suppressed', source: 'opt_out', message_id: 'msg_1', log_id: 41, policy_version: 'policy-7' },
      },
    });
  });

  it('each rejection code keeps its own status (429 limits, 423 paused)', () => {
    const limit = toResponse({ decision: rejected({ error_code: 'daily_message_limit_exceeded', error_message: 'Daily limit.' }), delivery: null }, ids);
    expect(answer(limit)).toMatchObject({ status: 429, body: { error: 'daily_message_limit_exceeded' } });
    const paused = toResponse({ decision: rejected({ error_code: 'instance_paused_for_review', error_message: 'Paused.' }), delivery: null }, ids);
    expect(answer(paused)).toMatchObject({ status: 423, body: { error: 'instance_paused_for_review' } });
  });

  it('the ids of the log entry win over same-named keys in a rule\'s details', () => {
    const decision = rejected({ error_code: 'policy_violation', error_message: 'No.', reasons: [{ rule: 'r', outcome: 'fail', detail: '{"log_id":1,"message_id":"x","policy_version":"y"}' }] });
    expect(answer(toResponse({ decision, delivery: null }, ids)).body).toMatchObject({ details: { log_id: 41, message_id: 'msg_1', policy_version: 'policy-7' } });
  });

  it('a rejection without a code, or with one outside the contract, is policy_violation with the default message', () => {
    const expected = {
      status: 403,
      body: {
        success: false,
        error: 'policy_violation',
        message: 'The message was refused by the responsible-messaging policy.',
        details: { rule: null, message_id: 'msg_1', log_id: 41, policy_version: 'policy-7' },
      },
    };
    expect(answer(toResponse({ decision: rejected({ reasons: [] }), delivery: null }, ids))).toEqual(expected);
    expect(answer(toResponse({ decision: rejected({ error_code: 'no_such_code', reasons: [] }), delivery: null }, ids))).toEqual(expected);
  });

  it('the failed rule\'s name stands in for details that are missing or not JSON', () => {
    const noDetail = rejected({ error_code: 'policy_violation', error_message: 'No.', reasons: [{ rule: 'content_rule', outcome: 'fail', detail: null }] });
    expect(answer(toResponse({ decision: noDetail, delivery: null }, ids)).body.details).toEqual({ rule: 'content_rule', message_id: 'msg_1', log_id: 41, policy_version: 'policy-7' });
    const notJson = rejected({ error_code: 'policy_violation', error_message: 'No.', reasons: [{ rule: 'content_rule', outcome: 'fail', detail: 'not json {' }] });
    expect(answer(toResponse({ decision: notJson, delivery: null }, ids)).body.details).toEqual({ rule: 'content_rule', message_id: 'msg_1', log_id: 41, policy_version: 'policy-7' });
  });

  it('an accepted decision whose delivery is under way is queued, with the decision\'s ids', () => {
    expect(answer(toResponse({ decision: decided({ message_id: 'msg_9', log_id: 99 }), delivery: null }, ids))).toEqual({
      status: 200,
      body: { success: true, status: 'queued', message_id: 'msg_9', log_id: 99 },
    });
  });

  it('a command not decided yet is 500 internal_error naming the ids to retry with', () => {
    expect(answer(toResponse({ decision: null, delivery: null }, ids))).toEqual({
      status: 500,
      body: {
        success: false,
        error: 'internal_error',
        message: 'The message was recorded but not yet processed. Retry with the same Idempotency-Key to get its outcome.',
        details: { state: 'pending_decision', message_id: 'msg_1', command_id: 'cmd_1' },
      },
    });
  });
});

describe('isFinal', () => {
  it('is final once delivered or failed, or once rejected; not while accepted or undecided', () => {
    expect(isFinal({ decision: null, delivery: dispatched() })).toBe(true);
    expect(isFinal({ decision: decided(), delivery: failed(false) })).toBe(true);
    expect(isFinal({ decision: rejected({}), delivery: null })).toBe(true);
    expect(isFinal({ decision: decided(), delivery: null })).toBe(false);
    expect(isFinal({ decision: null, delivery: null })).toBe(false);
  });
});

describe('toResponse for an instance manager that is not activated', () => {
  it('answers 502 gateway_send_failed with details.reason manager_license_required and says to activate it at its /manager page', () => {
    const delivery: SendProgress['delivery'] = {
      type: 'DeliveryFailed',
      payload: { event_id: 'evt_4', correlation_id: 'cmd_1', occurred_at: 3, customer_id: 'cus_1', instance_id: 'ins_1', message_id: 'msg_1', log_id: 41, reason: 'manager_license_required', detail: 'not activated', definitive: true, ...named } satisfies DeliveryFailed,
    };
    const { status, body } = answer(toResponse({ decision: decided(), delivery }, ids));
    expect(status).toBe(502);
    expect(body).toMatchObject({ success: false, error: 'gateway_send_failed', details: { reason: 'manager_license_required', message_id: 'msg_1', log_id: 41 } });
    expect(JSON.stringify(body)).toContain('not activated: open its /manager page and activate its licence there');
  });
});
