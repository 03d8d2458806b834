import { describe, expect, it } from 'vitest';
import { DEFAULT_POLICY_CONFIG } from './config/policy-config.ts';
import { connected, newContacts } from './guard/fixtures.ts';
import { POLICY_VERSION } from './index.ts';
import { knownPolicyVersions, policyForVersion } from './policy-versions.ts';
import { run, type PolicyInput } from './replay.ts';
import { RULES } from './rules/index.ts';
import { activeCustomer, aSend, CUSTOMER, HOUR, T0 } from './testing/fixtures.ts';

const BEFORE_GUARD = '2026-11-22.2+content-2026-11-22.1';

/** A new instance's burst of 25 new contacts, and a second message to one of them 4 s later. */
const inputs: PolicyInput[] = [
  ...[...activeCustomer(), connected(T0 - HOUR)].map((event) => ({ kind: 'fact' as const, event })),
  ...newContacts(25, T0, 7_000).map((command) => ({ kind: 'command' as const, command })),
  { kind: 'command', command: aSend({ recipient: '+14157770000', text: 'Your parcel is at the door.', occurredAt: T0 + 4_000 }) },
];

describe('policyForVersion', () => {
  it('gives the current policy for POLICY_VERSION, and null for a version it does not know', () => {
    const current = policyForVersion(POLICY_VERSION)!;
    expect(current.version).toBe(POLICY_VERSION);
    expect(current.config).toBe(DEFAULT_POLICY_CONFIG);
    expect(current.rules).toBe(RULES);
    expect(policyForVersion('1999-01-01.1+content-x')).toBeNull();
    expect(knownPolicyVersions()).toEqual([POLICY_VERSION, BEFORE_GUARD]);
  });

  it('gives the policy before the number guard its own config and rules: no guard rules, 3 s between sends to one recipient', () => {
    const before = policyForVersion(BEFORE_GUARD)!;
    expect(before.version).toBe(BEFORE_GUARD);
    expect(before.rules.map((r) => r.name)).toEqual(RULES.map((r) => r.name).filter((name) => name !== 'instance_not_restricted' && name !== 'first_contact_limit'));
    expect(Object.values(before.config.plans).map((p) => p.velocity.recipientMinIntervalMs)).toEqual([3_000, 3_000, 3_000]);
  });

  it('replays a log decided under the older version to the same decisions, which the current policy would not make', () => {
    const old = run(inputs, CUSTOMER, policyForVersion(BEFORE_GUARD)!).decisions.map((d) => (d.decision === 'accepted' ? 'accepted' : d.details.rule));
    expect(old).toEqual(Array(26).fill('accepted'));
    const now = run(inputs, CUSTOMER, policyForVersion(POLICY_VERSION)!).decisions.map((d) => (d.decision === 'accepted' ? 'accepted' : d.details.rule));
    expect(now).toEqual([...Array(20).fill('accepted'), ...Array(5).fill('first_contact_limit'), 'velocity']);
  });
});
