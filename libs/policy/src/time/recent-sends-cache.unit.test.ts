import { describe, expect, it } from 'vitest';
import { createPolicy } from '../policy.ts';
import { handleCommand } from '../react.ts';
import { replay } from '../replay.ts';
import { activeCustomer, aSend, CUSTOMER, T0 } from '../testing/fixtures.ts';
import type { PolicyDecision } from '../types.ts';
import { RecentSendsCache } from './recent-sends-cache.ts';

/** A small deterministic generator (mulberry32), so a failure can be replayed. */
function random(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const policy = createPolicy();

describe('RecentSendsCache', () => {
  it('changes no decision: a busy customer decided with and without it, with late commands and a snapshot round-trip midway', () => {
    for (const seed of [11, 12, 13]) {
      const next = random(seed);
      let plain = replay(activeCustomer('scale'), CUSTOMER);
      let cached = plain;
      const cache = new RecentSendsCache();
      const bodies = ['Your order has shipped.', 'Reminder: appointment tomorrow at 10.', 'Your code is 4411', 'Table for two confirmed.'];
      let clock = T0;
      const withCache: PolicyDecision[] = [];
      const without: PolicyDecision[] = [];
      for (let i = 0; i < 1_500; i += 1) {
        clock += Math.round(next() * 4_000);
        const command = aSend({
          commandId: `cmd_${seed}_${i}`,
          instanceId: `ins_${Math.floor(next() * 3)}`,
          recipient: `+1415555${String(Math.floor(next() * 150)).padStart(4, '0')}`,
          text: bodies[Math.floor(next() * bodies.length)]!,
          occurredAt: clock - (next() < 0.05 ? Math.round(next() * 600_000) : 0),
        });
        const a = handleCommand(command, plain, policy);
        const b = handleCommand(command, cached, policy, cache);
        without.push(a.decision);
        withCache.push(b.decision);
        plain = a.state;
        cached = i === 700 ? JSON.parse(JSON.stringify(b.state)) : b.state;
      }
      expect(withCache).toEqual(without);
      expect(cached).toEqual(plain);
      // The workload does reach the bulk limit, so the cached path is exercised on refusals too.
      expect(without.some((d) => d.decision === 'rejected' && d.details.reason === 'bulk_campaign')).toBe(true);
    }
  });
});
