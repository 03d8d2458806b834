import { describe, expect, it } from 'vitest';
import type { PolicyEvent } from './events.ts';
import { evolve } from './evolve.ts';
import { replay, run, type PolicyInput } from './replay.ts';
import { initialPolicyState, type CustomerPolicyState, type QualityBucket } from './state.ts';
import { createPolicy } from './policy.ts';
import { emptyTrie, trieEntries, trieSet, type TrieEntry, type TrieNode } from './structures/hash-trie.ts';
import { instanceEntries, instancesFrom } from './instances.ts';
import type { InstanceGuard } from './guard/state.ts';

const POLICY = createPolicy();
import { activeCustomer, aSend, CUSTOMER, DAY, delivery, HOUR, MINUTE, paused, planChanged, resumed, suppressed, T0 } from './testing/fixtures.ts';

/** A mixed day: operator actions, sends (some refused), deliveries and opt-outs. */
function mixedInputs(): PolicyInput[] {
  const facts: PolicyInput[] = [...activeCustomer('growth'), suppressed('+14155550001')].map((event) => ({ kind: 'fact', event }));
  for (let i = 0; i < 400; i += 1) {
    const at = T0 + i * 13_000;
    const text = i % 17 === 0 ? 'Big sale, 40% off' : i % 23 === 0 ? 'Go to https://bit.ly/zz' : `Your order ${i} has shipped.`;
    facts.push({ kind: 'command', command: aSend({ commandId: `cmd_mixed_${i}`, instanceId: `ins_${i % 3}`, recipient: `+1415555${String(i % 60).padStart(4, '0')}`, text, occurredAt: at }) });
    if (i % 5 === 0) facts.push({ kind: 'fact', event: delivery(i % 10 !== 0, at + 2_000, `ins_${i % 3}`) });
    if (i === 200) facts.push({ kind: 'fact', event: paused('ins_2', at + 1) }, { kind: 'fact', event: resumed('ins_2', at + 30 * MINUTE) });
  }
  return facts;
}

describe('replay and determinism', () => {
  it('running the same inputs twice gives deep-equal decisions, log and state', () => {
    const a = run(mixedInputs(), CUSTOMER, POLICY);
    const b = run(mixedInputs(), CUSTOMER, POLICY);
    expect(b).toEqual(a);
    expect(a.decisions.some((d) => d.decision === 'rejected')).toBe(true);
  });

  it('folding the log (what the service appends) rebuilds exactly the state the engine had', () => {
    const result = run(mixedInputs(), CUSTOMER, POLICY);
    expect(replay(result.log, CUSTOMER)).toEqual(result.state);
    expect(replay(result.log, CUSTOMER)).toEqual(replay(result.log, CUSTOMER));
  });

  it('the state is plain JSON: a snapshot round-trip changes nothing and decides the same', () => {
    const { state } = run(mixedInputs(), CUSTOMER, POLICY);
    const snapshot = JSON.parse(JSON.stringify(state)) as typeof state;
    expect(snapshot).toEqual(state);
    const next = [{ kind: 'command', command: aSend({ commandId: 'cmd_after', occurredAt: T0 + DAY }) }] as PolicyInput[];
    expect(run(next, snapshot, POLICY).decisions).toEqual(run(next, state, POLICY).decisions);
  });

  it('continues from a snapshot: replay(tail, replay(head)) equals replay(head + tail)', () => {
    const { log } = run(mixedInputs(), CUSTOMER, POLICY);
    const half = Math.floor(log.length / 2);
    expect(replay(log.slice(half), replay(log.slice(0, half), CUSTOMER))).toEqual(replay(log, CUSTOMER));
  });

  it('evolve never mutates the state it is given', () => {
    const state = replay(activeCustomer(), CUSTOMER);
    const frozen = JSON.stringify(state);
    const events: PolicyEvent[] = [suppressed(), paused(), resumed(), delivery(false), planChanged('scale', T0 + DAY, T0)];
    events.reduce(evolve, state);
    run([{ kind: 'command', command: aSend() }], state, POLICY);
    expect(JSON.stringify(state)).toBe(frozen);
  });

  it('ignores events of another customer', () => {
    const state = initialPolicyState(CUSTOMER);
    expect(evolve(state, { ...suppressed(), customerId: 'cus_other' })).toBe(state);
  });

  it('decides from event time only: nothing depends on the wall clock', () => {
    const inputs = mixedInputs();
    const realNow = Date.now;
    const first = run(inputs, CUSTOMER, POLICY);
    try {
      Date.now = () => T0 + 365 * DAY;
      expect(run(inputs, CUSTOMER, POLICY)).toEqual(first);
    } finally {
      Date.now = realNow;
    }
  });
});

/** The state without the guard's contact sets, which grow with the people written to (like `suppressed`), not with time. */
const withoutContacts = (state: CustomerPolicyState) => ({
  ...state,
  instances: instanceEntries(state.instances).map(([id, instance]) => [id, { ...instance, guard: instance.guard && { ...instance.guard, contacts: [] } }]),
});

/** Every instance's guard. */
const guardsOf = (state: CustomerPolicyState): InstanceGuard[] => instanceEntries(state.instances).flatMap(([, instance]) => (instance.guard ? [instance.guard] : []));

describe('bounded state', () => {
  it('after 10,000 decisions over 60 days the state stays small (old windows pruned)', () => {
    const customer = 'cus_big';
    const setup: PolicyEvent[] = [
      { type: 'PlanChanged', customerId: customer, at: T0, planId: 'scale', validUntil: T0 + 90 * DAY, by: 'billing', reason: 'paid' },
    ];
    let state = replay(setup, customer);
    const sizes: number[] = [];
    const step = (60 * DAY) / 10_000; // one send every ~8.6 minutes of event time
    for (let i = 0; i < 10_000; i += 1) {
      const command = aSend({ customerId: customer, commandId: `cmd_b${i}`, instanceId: `ins_${i % 5}`, recipient: `+1415${String(i).padStart(7, '0')}`, text: `Your order ${i} has shipped.`, occurredAt: T0 + i * step });
      const result = run([{ kind: 'command', command }], state, POLICY);
      state = result.state;
      if (i % 2_500 === 2_499) sizes.push(JSON.stringify(withoutContacts(state)).length);
    }
    // The day's sends (~170) dominate; 60 days of history would be ~10,000 entries per map.
    expect(Math.max(...sizes)).toBeLessThan(60_000);
    expect(Math.max(...sizes) / Math.min(...sizes)).toBeLessThan(1.5);
    // The send memory holds at most ~31 h of sends (~220 here: the retention, the sweep interval), whatever the history.
    expect(trieEntries(state.sends.lastSend).length).toBeLessThan(250);
    expect(trieEntries(state.sends.bodies).reduce((n, [, body]) => n + body.to.length, 0)).toBeLessThan(250);
    expect(trieEntries(state.sends.bodies).reduce((n, [, body]) => n + body.times.length, 0)).toBeLessThan(250);
    expect(instanceEntries(state.instances).every(([, instance]) => (instance.quality ?? []).length <= 24)).toBe(true);
    // The guard's windows are bounded; its contact sets grow with people (10,000 distinct here), not traffic.
    expect(guardsOf(state).every((guard) => guard.firstContacts.length <= 200 && guard.signals.length === 0)).toBe(true);
    expect(guardsOf(state).reduce((n, guard) => n + guard.contacts.reduce((m, shard) => m + shard.length, 0), 0)).toBe(10_000);
    expect(state.clock).toBeGreaterThan(T0 + 59 * DAY);
    expect(HOUR).toBe(3_600_000);
  }, 120_000); // a property of size, not of speed: give a loaded machine all the time it needs
});

/** What a version-5 engine kept of `log`: its accepted sends, in runs per UTC hour (one run per hour is a valid version-3+ list). */
function recentOf(log: PolicyEvent[]): Array<{ hour: number; sends: Array<{ at: number; instanceId: string; recipient: string; digest: string }> }> {
  const runs = new Map<number, Array<{ at: number; instanceId: string; recipient: string; digest: string }>>();
  for (const event of log) {
    if (event.type !== 'SendDecided' || event.decision !== 'accepted') continue;
    const hour = Math.floor(event.at / HOUR) * HOUR;
    runs.set(hour, [...(runs.get(hour) ?? []), { at: event.at, instanceId: event.instanceId, recipient: event.recipient, digest: event.digest.slice(0, 16) }]);
  }
  return [...runs].sort(([a], [b]) => a - b).map(([hour, sends]) => ({ hour, sends: sends.sort((a, b) => a.at - b.at) }));
}

/** Version 7's three per-instance maps, as a version-7 engine kept them (versions 2 to 6 the same). */
function perInstanceMaps(state: CustomerPolicyState) {
  const buckets: Record<string, { tokens: number; at: number }> = {};
  const quality: Record<string, QualityBucket[]> = {};
  const guards: Record<string, InstanceGuard> = {};
  for (const [id, instance] of instanceEntries(state.instances)) {
    if (instance.bucket) buckets[id] = instance.bucket;
    if (instance.quality) quality[id] = instance.quality;
    if (instance.guard) guards[id] = instance.guard;
  }
  return { buckets, quality, guards };
}

/** The state as version 7 stored it: `buckets`, `quality` and `guard.instances` where version 8 has `instances`. */
function asVersion7(state: CustomerPolicyState) {
  const { instances: _instances, ...rest } = state;
  const { buckets, quality, guards } = perInstanceMaps(state);
  return { ...rest, stateVersion: 7, buckets, quality, guard: { instances: guards } };
}

/** The state with no instance's guard (what an upgrade of a snapshot older than the guard knows). */
function withoutGuards(state: CustomerPolicyState): CustomerPolicyState {
  const { buckets, quality } = perInstanceMaps(state);
  return { ...state, instances: instancesFrom({ buckets, quality }) };
}

/** A snapshot of `version` (2..5) of the state `run` made: the send memory as version 5's list, the per-instance data as version 7's maps. */
function olderSnapshot(result: ReturnType<typeof run>, version: number, drop: Array<keyof ReturnType<typeof asVersion7>> = []): unknown {
  const { sends: _sends, ...rest } = asVersion7(result.state);
  for (const field of drop) delete (rest as Record<string, unknown>)[field];
  return JSON.parse(JSON.stringify({ ...rest, recent: recentOf(result.log), stateVersion: version }));
}

/** Everything an upgraded snapshot knows: every send of the list, with no sweep moment known yet. */
const upgradedFrom = (state: CustomerPolicyState): CustomerPolicyState => ({ ...state, sends: { ...state.sends, oldestKept: Number.MIN_SAFE_INTEGER } });

/** A trie in version 6's shape: `{ m, s }` nodes and `[key, value]` entries, at the same positions. */
function trieV6<V>(node: TrieNode<V>): unknown {
  const [m, ...slots] = node as [number, ...Array<TrieNode<V> | TrieEntry<V>>];
  return { m, s: slots.map((slot) => (Array.isArray(slot) ? trieV6(slot) : [slot.k, slot.v])) };
}

/** The state as version 6 stored it: version 6's tries, each body's times in `bodies`, and its recipients in a trie of their own. */
function asVersion6(state: CustomerPolicyState): unknown {
  let bodies = emptyTrie<number[]>();
  let bodyRecipients = emptyTrie<number>();
  for (const [body, sends] of trieEntries(state.sends.bodies)) {
    bodies = trieSet(bodies, body, sends.times);
    sends.to.forEach((recipient, i) => (bodyRecipients = trieSet(bodyRecipients, `${body.length}:${body}${recipient}`, sends.at[i]!)));
  }
  const sends = { oldestKept: state.sends.oldestKept, lastSend: trieV6(state.sends.lastSend), bodies: trieV6(bodies), bodyRecipients: trieV6(bodyRecipients) };
  return { ...asVersion7(state), stateVersion: 6, sends };
}

describe('stored snapshots', () => {
  it('upgradeState keeps a current snapshot, upgrades a version-1 one and refuses garbage', async () => {
    const { upgradeState, STATE_VERSION } = await import('./state.ts');
    const { state } = run(mixedInputs(), CUSTOMER, POLICY);
    expect(upgradeState(JSON.parse(JSON.stringify(state)))).toEqual(state);
    const { stateVersion: _v, sends: _s, guard: _g, ...v1 } = asVersion7(state);
    const upgraded = upgradeState({ ...v1, lastSend: {}, bulk: {} });
    expect(upgraded).toMatchObject({ stateVersion: STATE_VERSION, sends: initialPolicyState(CUSTOMER).sends, quota: state.quota, suppressed: state.suppressed });
    expect(upgraded!.instances).toEqual(withoutGuards(state).instances);
    expect(upgraded).not.toHaveProperty('bulk');
    expect(upgradeState({ nope: 1 })).toBeNull();
    expect(upgradeState({ ...state, stateVersion: 99 })).toBeNull();
  });

  it('upgradeState folds a version-5 snapshot\'s list of recent sends into the send memory, forgetting none: the next decisions are the same', async () => {
    const { upgradeState } = await import('./state.ts');
    const result = run(mixedInputs(), CUSTOMER, POLICY);
    const upgraded = upgradeState(olderSnapshot(result, 5));
    expect(upgraded).toEqual(upgradedFrom(result.state));
    // Recipient intervals, the bulk rule and late commands on both (ins_0 and ins_1 were paused by the day).
    const next: PolicyInput[] = Array.from({ length: 160 }, (_, i) => ({
      kind: 'command',
      command: aSend({ commandId: `cmd_next_${i}`, instanceId: 'ins_2', recipient: `+1415555${String(Math.floor(i / 2) % 70).padStart(4, '0')}`, text: 'Your order 7 has shipped.', occurredAt: T0 + 5_200_000 + i * 3_000 - (i % 9 === 0 ? 20 * MINUTE : 0) }),
    }));
    const fromUpgrade = run(next, upgraded!, POLICY);
    const fromState = run(next, result.state, POLICY);
    expect(fromUpgrade.decisions).toEqual(fromState.decisions);
    const refusedBy = new Set(fromState.decisions.map((d) => (d.decision === 'rejected' ? d.details.rule : 'accepted')));
    for (const outcome of ['accepted', 'bulk_campaign', 'velocity']) expect(refusedBy).toContain(outcome);
    expect(fromUpgrade.state).toEqual(fromState.state);
  });

  it('upgradeState moves a version-6 snapshot\'s second trie of body recipients into the bodies, forgetting none', async () => {
    const { upgradeState } = await import('./state.ts');
    // One body to several recipients, some of them twice (after their interval): the entries the move must merge.
    const again: PolicyInput[] = Array.from({ length: 40 }, (_, i) => ({
      kind: 'command',
      command: aSend({ commandId: `cmd_again_${i}`, instanceId: 'ins_2', recipient: `+1415555${String(i % 15).padStart(4, '0')}`, text: 'Your order 7 has shipped.', occurredAt: T0 + 5_200_000 + i * 60_000 }),
    }));
    const result = run(again, run(mixedInputs(), CUSTOMER, POLICY).state, POLICY);
    const bodies = trieEntries(result.state.sends.bodies).map(([, body]) => body);
    expect(bodies.some((body) => body.to.length > 1 && body.times.length === body.to.length)).toBe(true);
    expect(result.decisions.filter((d) => d.decision === 'accepted').length).toBeGreaterThan(15);
    const upgraded = upgradeState(JSON.parse(JSON.stringify(asVersion6(result.state))));
    expect(upgraded).toEqual(result.state);
  });

  it('upgradeState reads a version-4 snapshot (before the number guard) with an empty guard', async () => {
    const { upgradeState } = await import('./state.ts');
    const result = run(mixedInputs(), CUSTOMER, POLICY);
    expect(guardsOf(result.state)).toHaveLength(3);
    expect(upgradeState(olderSnapshot(result, 4, ['guard']))).toEqual(withoutGuards(upgradedFrom(result.state)));
  });

  it('upgradeState reads a version-3 snapshot (before linked ids) with no identities', async () => {
    const { upgradeState } = await import('./state.ts');
    const result = run(mixedInputs(), CUSTOMER, POLICY);
    expect(upgradeState(olderSnapshot(result, 3, ['identities', 'guard']))).toEqual({ ...withoutGuards(upgradedFrom(result.state)), identities: {} });
  });

  it('upgradeState moves a version-7 snapshot\'s per-instance maps into one record per instance, forgetting none: the next decisions are the same', async () => {
    const { upgradeState } = await import('./state.ts');
    const result = run(mixedInputs(), CUSTOMER, POLICY);
    const v7 = asVersion7(result.state);
    // Every kind of entry the move must carry: buckets, quality counters (ins_2's reset by its resume) and guards.
    expect([Object.keys(v7.buckets).length, Object.keys(v7.quality).length, Object.keys(v7.guard.instances).length]).toEqual([3, 3, 3]);
    const upgraded = upgradeState(JSON.parse(JSON.stringify(v7)));
    expect(upgraded).toEqual(result.state);
    const next: PolicyInput[] = Array.from({ length: 60 }, (_, i) => ({
      kind: 'command',
      command: aSend({ commandId: `cmd_v7_${i}`, instanceId: `ins_${i % 3}`, recipient: `+1415555${String(i % 70).padStart(4, '0')}`, text: `Order ${i % 4} shipped.`, occurredAt: T0 + 5_200_000 + i * 1_000 }),
    }));
    expect(run(next, upgraded!, POLICY)).toEqual(run(next, result.state, POLICY));
  });
});
