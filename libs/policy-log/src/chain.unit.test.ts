import { describe, expect, it } from 'vitest';
import type { SendDecided } from '@gw/events';
import { canonicalJson, entryHash, GENESIS_HASH } from './chain.ts';

const entry = (overrides: Partial<SendDecided> = {}): SendDecided => ({
  event_id: 'e1',
  correlation_id: 'cmd1',
  occurred_at: 1,
  customer_id: 'cus1',
  instance_id: 'ins1',
  message_id: 'msg1',
  log_id: 7,
  decision: 'accepted',
  error_code: null,
  error_message: null,
  reasons: [{ rule: 'active_plan', outcome: 'pass', detail: null }],
  policy_version: 'v1',
  recipient: '+14155552671',
  message_purpose: 'support',
  message_digest: 'abc',
  dispatch: null,
  partition_chain: 0,
  prev_hash: GENESIS_HASH,
  entry_hash: '',
  ...overrides,
});

describe('policy-log hash chain', () => {
  it('canonical JSON does not depend on key order', () => {
    expect(canonicalJson({ b: 1, a: { d: 2, c: [1, { f: 1, e: 2 }] } })).toBe(canonicalJson({ a: { c: [1, { e: 2, f: 1 }], d: 2 }, b: 1 }));
  });

  it('any change to a chained field or to the previous hash changes the entry hash', () => {
    const base = entryHash(GENESIS_HASH, entry());
    expect(entryHash(GENESIS_HASH, entry())).toBe(base);
    expect(entryHash(GENESIS_HASH, entry({ decision: 'rejected' }))).not.toBe(base);
    expect(entryHash(GENESIS_HASH, entry({ recipient: '+14155552672' }))).not.toBe(base);
    expect(entryHash('f'.repeat(64), entry())).not.toBe(base);
    // The message body and the hash fields themselves are not part of the chained content.
    expect(entryHash(GENESIS_HASH, entry({ dispatch: { instance_name: 'x', phone: 'y', text: 'z' }, entry_hash: 'zz' }))).toBe(base);
  });
});
