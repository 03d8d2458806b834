import { describe, expect, it } from 'vitest';
import type { AnyEvent, SendDecided } from '@gw/events';
import { createPolicy, initialPolicyState, qualityOf, type CustomerPolicyState, type PolicyEvent } from '@gw/policy';
import { entryHash, GENESIS_HASH, toFactRecord } from '@gw/policy-log';
import { freshCommands, runBatch, type BatchInput } from './run-batch.ts';
import { onboarding as onboardingFacts, sendRequested } from './testing.ts';

const CUSTOMER = 'cus_1';
const POLICY = createPolicy();
const T0 = Date.UTC(2026, 10, 22, 12);

const send = (n: number, correlationId = `cmd_${n}`): AnyEvent => ({ type: 'SendRequested', payload: sendRequested(CUSTOMER, n, T0, correlationId) }) as AnyEvent;

const fact = (event: PolicyEvent): AnyEvent => ({ type: 'PolicyInputRecorded', payload: toFactRecord(event, `op_${event.type}`) }) as AnyEvent;
const onboarding = onboardingFacts(CUSTOMER, T0 - 1000);

/** given the records of a batch (offsets from 0), with nothing applied or recorded yet unless said. */
function batch(events: AnyEvent[], overrides: Partial<BatchInput> = {}): BatchInput {
  const state = initialPolicyState(CUSTOMER);
  return {
    policy: POLICY,
    decoded: events.map((event, i) => ({ offset: BigInt(i), event })),
    partition: 2,
    applied: 0n,
    head: GENESIS_HASH,
    recorded: new Map(),
    foldedFacts: new Set(),
    logIds: [11, 12, 13, 14],
    stateOf: (): CustomerPolicyState => state,
    ...overrides,
  };
}

describe('runBatch', () => {
  it('decides each new command with the next log id and chains the entries from the given head', () => {
    const result = runBatch(batch([...onboarding.map(fact), send(1), send(2)]));
    expect(result.entries.map((e) => [e.log_id, e.decision])).toEqual([
      [11, 'accepted'],
      [12, 'accepted'],
    ]);
    expect(result.entries[0]!.prev_hash).toBe(GENESIS_HASH);
    expect(result.entries[1]!.prev_hash).toBe(result.entries[0]!.entry_hash);
    expect(result.entries[1]!.entry_hash).toBe(entryHash(result.entries[0]!.entry_hash, result.entries[1]!));
    expect(result.head).toBe(result.entries[1]!.entry_hash);
    expect(result.lastLogId).toBe(12);
    expect([...result.quota.values()].map((q) => q.used)).toEqual([2, 2]);
    expect(result.outcomes).toEqual([
      { topic: 'send-requested', outcome: 'accepted' },
      { topic: 'send-requested', outcome: 'accepted' },
    ]);
  });

  it('re-emits a recorded decision with the command text and folds nothing for it', () => {
    const recorded = { correlation_id: 'cmd_1', log_id: 7, dispatch: { phone: '+14155551001', text: null } } as unknown as SendDecided;
    const result = runBatch(batch([...onboarding.map(fact), send(1)], { recorded: new Map([['cmd_1', recorded]]) }));
    expect(result.entries).toEqual([]);
    // Answering the command's own record (offset 2, after the two onboarding facts).
    expect(result.outputs).toEqual([{ type: 'SendDecided', payload: { ...recorded, dispatch: { phone: '+14155551001', text: 'Your code is 100001' } }, offset: 2n }]);
    expect(result.quota.size).toBe(0);
    expect(result.outcomes).toEqual([{ topic: 'send-requested', outcome: 'redelivered' }]);
  });

  it('decides a command repeated within the batch once, and the repeat re-emits that decision', () => {
    const events = [...onboarding.map(fact), send(1, 'cmd_same'), send(2, 'cmd_same')];
    expect(freshCommands(batch(events).decoded, new Map())).toBe(1);
    const result = runBatch(batch(events));
    expect(result.entries).toHaveLength(1);
    expect(result.outputs.map((o) => (o.type === 'SendDecided' ? o.payload.log_id : null))).toEqual([11, 11]);
  });

  it('skips facts below the applied offset: their effect is already written', () => {
    const result = runBatch(batch([...onboarding.map(fact), send(1)], { applied: 2n }));
    // The onboarding facts (offsets 0 and 1) are not folded again, so the customer has no plan.
    expect(result.entries[0]!.error_code).toBe('active_plan_required');
  });

  it('keeps suppression changes in order and refuses a send to a suppressed recipient', () => {
    const recipient = '+14155551001';
    const result = runBatch(
      batch([
        ...onboarding.map(fact),
        fact({ type: 'RecipientSuppressed', customerId: CUSTOMER, at: T0, recipient, source: 'manual', reason: 'asked', by: 'ops' }),
        fact({ type: 'RecipientUnsuppressed', customerId: CUSTOMER, at: T0, recipient, source: 'manual', by: 'ops' }),
        fact({ type: 'RecipientSuppressed', customerId: CUSTOMER, at: T0, recipient, source: 'opt_out', reason: 'STOP', by: 'recipient' }),
        send(1),
      ]),
    );
    expect(result.suppressions.map((s) => `${s.op} ${s.source}`)).toEqual(['add manual', 'remove manual', 'add opt_out']);
    expect(result.entries[0]!.error_code).toBe('recipient_suppressed');
    expect(result.quota.size).toBe(0);
  });

  it('folds a fact once: a copy at a later offset and a fact folded in an earlier batch are skipped', () => {
    const outcome = (id: string): AnyEvent => ({
      type: 'PolicyInputRecorded',
      payload: { ...toFactRecord({ type: 'DeliveryOutcomeRecorded', customerId: CUSTOMER, at: T0, instanceId: 'ins_1', recipient: '+14155551001', delivered: true }, 'cmd_x'), event_id: id },
    }) as AnyEvent;
    const result = runBatch(batch([...onboarding.map(fact), outcome('fact_a'), outcome('fact_a'), outcome('fact_b')], { foldedFacts: new Set(['fact_b']) }));
    expect(result.factIds).toEqual([expect.any(String), expect.any(String), 'fact_a']);
    const delivered = qualityOf(result.states.get(CUSTOMER)!.instances, 'ins_1')?.reduce((n, b) => n + b.delivered, 0);
    expect(delivered).toBe(1);
    expect(result.outcomes.filter((o) => o.outcome === 'repeated')).toHaveLength(2);
  });

  it('refuses to run with fewer log ids than new commands', () => {
    expect(() => runBatch(batch([...onboarding.map(fact), send(1)], { logIds: [] }))).toThrow(/fewer log ids/);
  });
});
