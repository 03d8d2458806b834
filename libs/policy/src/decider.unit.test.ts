import { describe, expect, it } from 'vitest';
import { decide, initialPolicyState } from './decider.ts';
import type { Rule, SendCommand } from './types.ts';

const command = (overrides: Partial<SendCommand> = {}): SendCommand => ({
  commandId: 'cmd_1',
  customerId: 'cus_1',
  instanceId: 'ins_1',
  recipient: '+14155552671',
  purpose: 'transactional',
  text: 'Your order 1234 has shipped.',
  occurredAt: Date.UTC(2026, 10, 22, 12),
  ...overrides,
});

describe('decide', () => {
  it('given no prior events, when an allowed purpose is sent, then it is accepted with every rule recorded', () => {
    const decision = decide(command(), initialPolicyState());
    expect(decision).toEqual({ decision: 'accepted', rules: [{ rule: 'purpose_allowed', outcome: 'pass', details: null }] });
  });

  it('when the purpose is marketing, then it is rejected with message_purpose_not_allowed naming the rule', () => {
    const decision = decide(command({ purpose: 'marketing' }), initialPolicyState());
    expect(decision.decision).toBe('rejected');
    if (decision.decision !== 'rejected') return;
    expect(decision.code).toBe('message_purpose_not_allowed');
    expect(decision.details).toMatchObject({ rule: 'purpose_allowed', field: 'message_purpose', value: 'marketing' });
  });

  it('records the rules after the first failure as skipped', () => {
    const failing: Rule = () => ({ rule: 'first', outcome: 'fail', code: 'policy_violation', details: { reason: 'x' } });
    const later: Rule = () => ({ rule: 'second', outcome: 'pass' });
    const decision = decide(command(), initialPolicyState(), [failing, later]);
    expect(decision.rules).toEqual([
      { rule: 'first', outcome: 'fail', details: { reason: 'x' } },
      { rule: 'second', outcome: 'skipped', details: null },
    ]);
  });

  it('is deterministic: the same command and state give the same decision', () => {
    const a = decide(command({ purpose: 'support' }), initialPolicyState());
    const b = decide(command({ purpose: 'support' }), initialPolicyState());
    expect(a).toEqual(b);
  });
});
