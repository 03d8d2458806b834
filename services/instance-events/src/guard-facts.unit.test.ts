import { describe, expect, it } from 'vitest';
import { signalKey } from './guard-facts.ts';
import type { RestrictionReport } from './restriction-signals.ts';

const report = (ref?: string): RestrictionReport => ({ signal: 'send_error', code: null, until: null, ourSendOnly: true, ...(ref === undefined ? {} : { ref }) });

describe('signalKey', () => {
  it('keys a signal by its ref, or by the source event without one', () => {
    expect(signalKey(report('3EB0ABC'), 'evt_1')).toBe('send_error:3EB0ABC');
    expect(signalKey(report(), 'evt_1')).toBe('send_error:evt_1');
  });

  it('keys a huge ref (a manager may send any string) by its digest: short enough for a primary key, still one key per ref', () => {
    const huge = 'x'.repeat(100_000);
    const key = signalKey(report(huge), 'evt_1');
    expect(key.length).toBeLessThan(300);
    expect(key).toBe(signalKey(report(huge), 'evt_2'));
    expect(key).not.toBe(signalKey(report(`${huge}y`), 'evt_1'));
  });

  it('keys a ref Postgres text cannot hold as it is (a NUL, a lone surrogate) by its digest, one key per ref', () => {
    for (const ref of ['3EB0\u0000ABC', '3EB0\uD800ABC', '3EB0\uDC00ABC']) {
      const key = signalKey(report(ref), 'evt_1');
      expect(key).toMatch(/^send_error:sha256:[0-9a-f]{64}$/);
      expect(key).toBe(signalKey(report(ref), 'evt_2'));
    }
    expect(signalKey(report('3EB0\uD800ABC'), 'evt_1')).not.toBe(signalKey(report('3EB0\uDC00ABC'), 'evt_1'));
  });
});
