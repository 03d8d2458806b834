import { describe, expect, it } from 'vitest';
import { createPolicy, evolve, initialPolicyState, type CustomerPolicyState, type PolicyEvent } from '@gw/policy';
import { engineStep } from './engine-step.ts';
import { toFactRecord } from './facts.ts';
import { planStateWrites } from './state-store.ts';

const CUSTOMER = 'cus_tail';
const T0 = Date.UTC(2026, 10, 27, 12);
const POLICY = createPolicy();
const STATE = initialPolicyState(CUSTOMER);
const send = (at: number): PolicyEvent => ({ type: 'DeliveryOutcomeRecorded', customerId: CUSTOMER, at, instanceId: 'ins_1', recipient: '+14155550100', delivered: true });
const plan: PolicyEvent = { type: 'PlanChanged', customerId: CUSTOMER, at: T0, planId: 'scale', validUntil: T0 + 30 * 86_400_000, by: 'billing', reason: 'paid' };

describe('planStateWrites: a snapshot or a tail per customer', () => {
  it('appends to the tail of a customer whose stored tail it knows, while the tail stays under the limit', () => {
    const writes = planStateWrites(new Map([[CUSTOMER, STATE]]), new Map([[CUSTOMER, [send(1), send(2)]]]), new Map([[CUSTOMER, 3]]), 10);
    expect(writes.snapshots.size).toBe(0);
    expect(writes.tails).toEqual([{ customerId: CUSTOMER, events: [send(1), send(2)] }]);
    expect(writes.tailEvents.get(CUSTOMER)).toBe(5);
  });

  it('writes a snapshot (and clears the tail) once the tail would reach the limit', () => {
    const writes = planStateWrites(new Map([[CUSTOMER, STATE]]), new Map([[CUSTOMER, [send(1), send(2)]]]), new Map([[CUSTOMER, 8]]), 10);
    expect([...writes.snapshots.keys()]).toEqual([CUSTOMER]);
    expect(writes.tails).toEqual([]);
    expect(writes.tailEvents.get(CUSTOMER)).toBe(0);
  });

  it('writes a snapshot for a customer with no known snapshot, for a fact other than a send, an outcome or a contact, and with the limit at 0 or 1', () => {
    const one = (events: PolicyEvent[], known: number | undefined, every: number) =>
      planStateWrites(new Map([[CUSTOMER, STATE]]), new Map([[CUSTOMER, events]]), new Map(known === undefined ? [] : [[CUSTOMER, known]]), every).snapshots.size;
    expect(one([send(1)], undefined, 100)).toBe(1);
    expect(one([send(1), plan], 0, 100)).toBe(1);
    expect(one([send(1)], 0, 1)).toBe(1);
    expect(one([send(1)], 0, 0)).toBe(1);
    expect(one([send(1)], 0, 2)).toBe(0);
  });
});

describe('a state stored as a snapshot and a tail', () => {
  it('folds back to the state the engine holds: the tail travels as JSON and evolve reads it the same', () => {
    // A busy customer's sends through the engine (decided, some refused, an automatic pause
    // possible), their outcomes and contacts learned, snapshotted every 7 events as the consumer does.
    const facts: PolicyEvent[] = [
      { type: 'CustomerRegistered', customerId: CUSTOMER, at: T0 - 1 },
      plan,
      { type: 'LimitsOverridden', customerId: CUSTOMER, at: T0, daily: 100_000, monthly: 1_000_000, velocity: { burst: 5, refillPerMinute: 30 }, grantedBy: 'ops', reason: 'test' },
    ];
    let state: CustomerPolicyState = facts.reduce(evolve, STATE);
    let snapshot: unknown = JSON.parse(JSON.stringify(state));
    let tail: unknown[] = [];
    let known = 0;
    for (let i = 0; i < 400; i++) {
      const at = T0 + i * 7_000;
      const input =
        i % 5 === 4
          ? { type: 'PolicyInputRecorded' as const, payload: toFactRecord({ type: 'ContactLearned', customerId: CUSTOMER, at, instanceId: `ins_${i % 3}`, contact: `+1415555${String(2000 + i).padStart(4, '0')}` }, `corr_${i}`) }
          : i % 5 === 3
            ? { type: 'PolicyInputRecorded' as const, payload: toFactRecord({ type: 'DeliveryOutcomeRecorded', customerId: CUSTOMER, at, instanceId: `ins_${i % 3}`, recipient: `+1415555${String(1000 + (i % 40)).padStart(4, '0')}`, delivered: i % 2 === 0 }, `corr_${i}`) }
            : {
                type: 'SendRequested' as const,
                payload: {
                  event_id: `evt_${i}`, correlation_id: `cmd_${i}`, occurred_at: at, customer_id: CUSTOMER, instance_id: `ins_${i % 3}`, instance_name: 'main', message_id: `msg_${i}`,
                  phone: `+1415555${String(1000 + (i % 40)).padStart(4, '0')}`, message: i % 11 === 0 ? 'Flash sale! 20% off everything' : `Your order ${i} has shipped.`,
                  message_purpose: 'transactional', source: 'api' as const, idempotency_key: null,
                },
              };
      const step = engineStep(input as Parameters<typeof engineStep>[0], state, POLICY);
      if (step.kind === 'ignored') throw new Error('not folded');
      state = step.state;
      const writes = planStateWrites(new Map([[CUSTOMER, state]]), new Map([[CUSTOMER, step.folded]]), new Map([[CUSTOMER, known]]), 7);
      if (writes.snapshots.size > 0) (snapshot = JSON.parse(JSON.stringify(state))), (tail = []);
      else tail.push(...(JSON.parse(JSON.stringify(writes.tails[0]!.events)) as unknown[]));
      known = writes.tailEvents.get(CUSTOMER)!;
      // What a reader gets: the snapshot with its tail folded in, equal to the engine's state.
      const read = (tail as PolicyEvent[]).reduce(evolve, snapshot as CustomerPolicyState);
      expect(read).toEqual(JSON.parse(JSON.stringify(state)));
    }
  });
});
