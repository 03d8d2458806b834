import { describe, expect, it } from 'vitest';
import { createPolicy, guardOf, initialPolicyState, replay, type PolicyEvent } from '@gw/policy';
import { engineStep } from './engine-step.ts';
import { toFactRecord } from './facts.ts';

const CUSTOMER = 'cus_guard';
const T0 = Date.UTC(2026, 10, 27, 12);
const POLICY = createPolicy();
const recorded = (fact: PolicyEvent) => ({ type: 'PolicyInputRecorded' as const, payload: toFactRecord(fact, 'corr_1') });
const plan: PolicyEvent = { type: 'PlanChanged', customerId: CUSTOMER, at: T0 - 1, planId: 'starter', validUntil: T0 + 86_400_000, by: 'billing', reason: 'paid' };

describe('engineStep: the number guard facts from the instance-events ingest', () => {
  it('folds a RestrictionSignalled recorded as PolicyInputRecorded and publishes the InstanceRestricted it derives', () => {
    const signal: PolicyEvent = { type: 'RestrictionSignalled', customerId: CUSTOMER, at: T0, instanceId: 'ins_1', signal: 'send_error', code: null, until: null, messageId: 'msg_1', recipient: '+14155550100' };
    const step = engineStep(recorded(signal), replay([plan], CUSTOMER), POLICY);
    expect(step.kind).toBe('folded');
    if (step.kind !== 'folded') return;
    expect(step.emitted).toEqual([{ type: 'InstanceRestricted', customerId: CUSTOMER, at: T0, instanceId: 'ins_1', signal: 'send_error', until: T0 + 3_600_000, signals: 1 }]);
    expect(step.folded.map((e) => e.type)).toEqual(['RestrictionSignalled', 'InstanceRestricted']);
    expect(guardOf(step.state.instances, 'ins_1')?.restriction).toEqual({ signal: 'send_error', at: T0, until: T0 + 3_600_000 });
  });

  it('folds InstanceConnected, ContactLearned and RestrictionLifted into the guard', () => {
    let state = replay([plan], CUSTOMER);
    const facts: PolicyEvent[] = [
      { type: 'InstanceConnected', customerId: CUSTOMER, at: T0, instanceId: 'ins_1', firstConnectedAt: T0 - 5_000 },
      { type: 'ContactLearned', customerId: CUSTOMER, at: T0, instanceId: 'ins_1', contact: '+14155550100' },
      { type: 'RestrictionLifted', customerId: CUSTOMER, at: T0, instanceId: 'ins_1', by: 'alice', reason: 'reviewed' },
    ];
    for (const fact of facts) {
      const step = engineStep(recorded(fact), state, POLICY);
      expect(step.kind).toBe('folded');
      if (step.kind === 'folded') state = step.state;
    }
    expect(guardOf(state.instances, 'ins_1')).toMatchObject({ firstConnectedAt: T0 - 5_000, restriction: null, signals: [] });
    expect(guardOf(state.instances, 'ins_1')?.contacts.flat()).toEqual(['+14155550100']);
  });

  it('ignores a fact of a type the engine does not know, rather than failing the batch', () => {
    const state = initialPolicyState(CUSTOMER);
    const unknown = recorded({ type: 'SomethingNew', customerId: CUSTOMER, at: T0 } as unknown as PolicyEvent);
    expect(engineStep(unknown, state, POLICY)).toEqual({ kind: 'ignored' });
  });
});
