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
});
