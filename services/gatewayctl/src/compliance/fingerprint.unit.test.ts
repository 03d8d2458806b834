// Verify's per-entry fast paths against the plain definitions they stand for, over random and
// realistic entries: the chain text must be byte for byte canonicalJson(chainedFields(entry)),
// and two copies of an entry must get the same digest exactly when their fields are equal.
import { describe, expect, it } from 'vitest';
import type { SendDecided, SendRequested } from '@gw/events';
import { decide, evolve, initialPolicyState, type PolicyEvent } from '@gw/policy';
import { canonicalJson, chainedFields, toDecidedEvent } from '@gw/policy-log';
import { comparable } from './entries.ts';
import { chainedJson, compareDigest, hashOf, recordDigest } from './fingerprint.ts';
import { random, randomEntry, value, type Rng } from './testing/random-entries.ts';

/** A random entry with every field an entry carries, odd values included. */
function oddEntry(rng: Rng, from?: SendDecided): SendDecided {
  const entry = randomEntry(rng, from) as unknown as Record<string, unknown>;
  for (const field of ['event_id', 'log_id', 'prev_hash', 'entry_hash', 'dispatch', 'message']) {
    if (!from || rng.next() < 0.08) entry[field] = rng.next() < 0.7 ? (field === 'log_id' ? rng.int(1000) : `${field}-${rng.int(3)}`) : value(rng);
  }
  // Reasons with keys of their own, or without the usual ones, now and then.
  if (Array.isArray(entry.reasons) && entry.reasons.length > 0 && rng.next() < 0.1) {
    const r = entry.reasons[0] as Record<string, unknown> | null;
    if (r && typeof r === 'object') {
      if (rng.next() < 0.5) r.extra = value(rng);
      else delete r[rng.pick(['rule', 'outcome', 'detail'])];
    }
  }
  return entry as unknown as SendDecided;
}

/** Entries as the policy consumer writes them: real decisions with their rule details. */
function realEntries(n: number): SendDecided[] {
  const customerId = 'cus_1';
  const at = Date.UTC(2026, 0, 1);
  const setup: PolicyEvent[] = [
    { type: 'CustomerRegistered', customerId, at },
    { type: 'PlanChanged', customerId, at, planId: 'scale', validUntil: at + 30 * 86_400_000, by: 'ops', reason: 'paid' },
    { type: 'RecipientSuppressed', customerId, at, recipient: '+14155550003', source: 'opt_out', reason: 'STOP', by: 'recipient' },
  ];
  let state = setup.reduce(evolve, initialPolicyState(customerId));
  const entries: SendDecided[] = [];
  for (let i = 0; i < n; i++) {
    const command: SendRequested = {
      event_id: `evt_${i}`, correlation_id: `cmd_${i}`, occurred_at: at + i * 1_000, customer_id: customerId, instance_id: `ins_${i % 3}`, instance_name: 'shop',
      message_id: `msg_${i}`, phone: `+1415555000${i % 5}`, message: i % 7 === 0 ? 'Flash sale! 20% off, buy now' : `Your code is ${i} "quoted" \\ done`, message_purpose: 'transactional', source: 'api', idempotency_key: null,
    };
    const { decision, events } = decide(
      { commandId: command.correlation_id, customerId, instanceId: command.instance_id, recipient: command.phone, purpose: 'transactional', text: command.message, occurredAt: command.occurred_at, source: 'api' },
      state,
    );
    state = events.reduce(evolve, state);
    const entry = toDecidedEvent(command, decision, i + 1, 'v1', events[0]!.type === 'SendDecided' ? events[0]!.digest : '');
    entry.prev_hash = i === 0 ? '0'.repeat(64) : entries[i - 1]!.entry_hash;
    entry.entry_hash = hashOf(entry.prev_hash, chainedJson(entry));
    entries.push(entry);
  }
  return entries;
}

const compareOf = (entry: SendDecided) => compareDigest(entry, hashOf(entry.prev_hash, chainedJson(entry)));
/** What recordDigest must tell apart: the whole record as canonical JSON (which writes a null error message and leaves out an undefined one). */
const wholeRecord = (entry: SendDecided) => canonicalJson(entry);

describe('verify fast paths', () => {
  it('chainedJson writes canonicalJson(chainedFields(entry)) for real entries and for odd ones', () => {
    for (const entry of realEntries(300)) expect(chainedJson(entry)).toBe(canonicalJson(chainedFields(entry)));
    const rng = random(21);
    for (let i = 0; i < 5_000; i++) {
      const entry = oddEntry(rng);
      expect(chainedJson(entry), JSON.stringify(entry)).toBe(canonicalJson(chainedFields(entry)));
    }
  });

  it('compareDigest matches exactly when the comparable fields match; recordDigest when the whole records do', () => {
    const rng = random(22);
    const real = realEntries(50);
    let sameComparable = 0;
    let sameRecord = 0;
    for (let i = 0; i < 5_000; i++) {
      const a = i % 2 === 0 ? oddEntry(rng) : { ...rng.pick(real) };
      const b = rng.next() < 0.7 ? oddEntry(rng, a) : oddEntry(rng);
      const comparableEqual = canonicalJson(comparable(a)) === canonicalJson(comparable(b));
      const recordEqual = wholeRecord(a) === wholeRecord(b);
      if (comparableEqual) sameComparable++;
      if (recordEqual) sameRecord++;
      const [ca, cb] = [compareOf(a), compareOf(b)];
      expect(ca === cb, JSON.stringify([a, b])).toBe(comparableEqual);
      expect(recordDigest(a, ca) === recordDigest(b, cb), JSON.stringify([a, b])).toBe(recordEqual);
    }
    // Both answers come up often enough to mean something.
    expect(sameComparable).toBeGreaterThan(500);
    expect(sameRecord).toBeGreaterThan(300);
  });
});
