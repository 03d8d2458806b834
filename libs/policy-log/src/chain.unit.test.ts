import { describe, expect, it } from 'vitest';
import type { SendDecided } from '@gw/events';
import { canonicalJson, chainedFields, entryHash, GENESIS_HASH } from './chain.ts';

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
  it('keeps the text and hash every log written so far was chained with', () => {
    // Pinned: a change of canonical JSON would break the verification of every existing log.
    const written = entry({
      decision: 'rejected',
      error_code: 'policy_violation',
      error_message: 'Blocked: "x"\n',
      reasons: [
        { rule: 'module_enabled', outcome: 'pass', detail: '{"module":"api"}' },
        { rule: 'content_policy', outcome: 'fail', detail: JSON.stringify({ reason: 'ü\u2028"q"', matched: ['a', 'b'], score: 1.5 }) },
        { rule: 'bulk_campaign', outcome: 'skipped', detail: null },
      ],
      partition_chain: 3,
    });
    expect(canonicalJson(chainedFields(written))).toBe(
      '{"command_id":"cmd1","customer_id":"cus1","decision":"rejected","error_code":"policy_violation","event_id":"e1","instance_id":"ins1","log_id":7,' +
        '"message_digest":"abc","message_id":"msg1","message_purpose":"support","occurred_at":1,"partition_chain":3,"policy_version":"v1",' +
        '"reasons":[{"detail":"{\\"module\\":\\"api\\"}","outcome":"pass","rule":"module_enabled"},' +
        '{"detail":"{\\"reason\\":\\"ü\u2028\\\\\\"q\\\\\\"\\",\\"matched\\":[\\"a\\",\\"b\\"],\\"score\\":1.5}","outcome":"fail","rule":"content_policy"},' +
        '{"detail":null,"outcome":"skipped","rule":"bulk_campaign"}],"recipient":"+14155552671"}',
    );
    expect(entryHash(GENESIS_HASH, written)).toBe('8b033f36de4ec2bdfe4118c0d6892b31ec1f3aa5917bbbf00360c8ee89bd2be3');
  });

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
