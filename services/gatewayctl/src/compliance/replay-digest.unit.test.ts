// The replay's digests and its shares, over random inputs: a digest must match exactly when the
// replay fields match (the comparison verify rests on), whichever way it was computed.
import { describe, expect, it } from 'vitest';
import type { SendDecided, SendRequested } from '@gw/events';
import { canonicalJson } from '@gw/policy-log';
import { POLICY_VERSION, type PolicyDecision } from '@gw/policy';
import { replayDigestOf, replayDigestOfDecision } from './fingerprint.ts';
import { mergeOutcomes, splitScope, type ReplayOutcome, type ReplayScope } from './replay-pass.ts';
import { expectedEntry, replayFields } from './replay.ts';
import { random, randomEntry, STRINGS } from './testing/random-entries.ts';

/** What the digest must tell apart: the replay fields, compared as canonical JSON (what verify reports on), reasons as they are when not a list. */
function fieldsOf(e: SendDecided): unknown {
  const reasons: unknown = e.reasons;
  const listed = Array.isArray(reasons) ? reasons.map((r: Partial<{ rule: unknown; outcome: unknown; detail: unknown }> | null) => ({ rule: r?.rule, outcome: r?.outcome, detail: r?.detail ?? null })) : reasons;
  return { ...replayFields({ ...e, reasons: [] }), reasons: listed };
}
const sameFields = (a: SendDecided, b: SendDecided) => canonicalJson(fieldsOf(a)) === canonicalJson(fieldsOf(b));

describe('replay digests', () => {
  it('two entries get the same digest exactly when their replay fields are equal', () => {
    const rng = random(11);
    let equalPairs = 0;
    for (let i = 0; i < 20_000; i++) {
      const a = randomEntry(rng);
      const b = rng.next() < 0.6 ? randomEntry(rng, a) : randomEntry(rng);
      const same = sameFields(a, b);
      if (same) equalPairs++;
      expect(replayDigestOf(a) === replayDigestOf(b), JSON.stringify([a, b])).toBe(same);
    }
    expect(equalPairs).toBeGreaterThan(2_000);
  });

  it('a lone surrogate and the replacement character UTF-8 would write for it stay apart', () => {
    const base = { correlation_id: 'c', reasons: [] } as unknown as SendDecided;
    expect(replayDigestOf({ ...base, correlation_id: '\ud800' })).not.toBe(replayDigestOf({ ...base, correlation_id: '\ufffd' }));
    expect(replayDigestOf({ ...base, correlation_id: '\udc00x' })).not.toBe(replayDigestOf({ ...base, correlation_id: '\ud800x' }));
  });

  it('replayDigestOfDecision equals the digest of the entry the consumer would write for that decision', () => {
    const rng = random(12);
    const rules = ['module_enabled', 'active_plan', 'daily_limit', 'velocity', 'content_policy'];
    for (let i = 0; i < 5_000; i++) {
      const command: SendRequested = {
        event_id: `e${i}`, correlation_id: String(rng.pick(STRINGS)) + i, occurred_at: rng.int(2 ** 41), customer_id: rng.pick(STRINGS), instance_id: rng.pick(STRINGS),
        instance_name: 'n', message_id: rng.pick(STRINGS), phone: rng.pick(STRINGS), message: 'body', message_purpose: rng.pick(STRINGS), source: 'api', idempotency_key: null,
      };
      const records = rules.map((rule) => ({ rule, outcome: rng.pick(['pass', 'fail', 'skipped'] as const), details: rng.next() < 0.3 ? null : rng.next() < 0.5 ? Object.freeze({ k: rng.pick(STRINGS) }) : { n: rng.int(100), s: rng.pick(STRINGS) } }));
      const decision: PolicyDecision = rng.next() < 0.5
        ? { decision: 'accepted', rules: records }
        : { decision: 'rejected', code: 'policy_violation', message: rng.pick(STRINGS), details: { rule: 'x', reason: rng.pick(STRINGS) }, rules: records };
      const digest = rng.pick(STRINGS);
      const partition = rng.int(6);
      expect(replayDigestOfDecision(command, decision, digest, POLICY_VERSION, partition)).toBe(replayDigestOf(expectedEntry(command, decision, digest, partition)));
    }
  });
});

describe('replay shares', () => {
  const scope: ReplayScope = {
    topic: 't',
    ends: [[0, '0', '100'], [1, '10', '20'], [2, '0', '0'], [3, '5', '400'], [4, '0', '90'], [5, '0', '95']],
    committed: [[0, '100']],
    customers: null,
  };

  it('splits the partitions into balanced shares that cover each once', () => {
    for (const parts of [1, 2, 3, 6, 9]) {
      const shares = splitScope(scope, parts);
      expect(shares.length).toBe(Math.min(parts, 6));
      expect(shares.flatMap((s) => s.partitions!).sort()).toEqual([0, 1, 2, 3, 4, 5]);
      for (const share of shares) expect({ ...share, partitions: undefined }).toEqual({ ...scope, partitions: undefined });
    }
    const [big, rest] = splitScope(scope, 2);
    expect(big!.partitions).toEqual([3]); // 395 records against 100 + 10 + 0 + 90 + 95
    expect(rest!.partitions).toEqual([0, 1, 2, 4, 5]);
    // A share of a share splits only its own partitions.
    expect(splitScope(rest!, 2).flatMap((s) => s.partitions!).sort()).toEqual([0, 1, 2, 4, 5]);
  });

  it('merges outcomes as one replay would count them; a command id decided in two shares counts once', () => {
    const outcome = (o: Partial<ReplayOutcome>): ReplayOutcome => ({ read: 0, customerEvents: 0, undecodable: 0, deadLettered: 0, duplicateCommands: 0, decided: [], pending: [], errors: [], kept: [], elapsedMs: 0, ...o });
    const merged = mergeOutcomes([
      outcome({ read: 5, customerEvents: 4, undecodable: 1, duplicateCommands: 1, decided: [['a', 'd1', 0, '1', 'c1'], ['b', 'd2', 0, '2', 'c1']], pending: ['p'], elapsedMs: 30 }),
      outcome({ read: 3, customerEvents: 3, decided: [['b', 'd3', 1, '7', 'c2'], ['c', 'd4', 1, '8', 'c2']], errors: [{ eventType: 'SendRequested', correlationId: 'x', customerId: 'c2', position: '1@9', error: 'boom' }], elapsedMs: 50 }),
    ]);
    expect(merged).toEqual(
      outcome({
        read: 8, customerEvents: 7, undecodable: 1, duplicateCommands: 2, elapsedMs: 50,
        decided: [['a', 'd1', 0, '1', 'c1'], ['b', 'd2', 0, '2', 'c1'], ['c', 'd4', 1, '8', 'c2']],
        pending: ['p'], errors: [{ eventType: 'SendRequested', correlationId: 'x', customerId: 'c2', position: '1@9', error: 'boom' }],
      }),
    );
  });
});
