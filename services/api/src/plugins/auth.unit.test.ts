import { describe, expect, it } from 'vitest';
import type { Queryable } from '@gw/db';
import { keyUseRecorder } from './auth.ts';

// The note of a key's use: at most once a minute per key and process, in the background, and a
// failure is only logged (the key id and the error's kind), never raised into the send.
function fakePool(outcome: () => Promise<unknown>) {
  const calls: unknown[] = [];
  return { calls, pool: { query: (query: unknown) => { calls.push(query); return outcome(); } } as unknown as Queryable };
}

const settle = () => new Promise((r) => setTimeout(r, 0));

describe('keyUseRecorder', () => {
  it('writes a key at most once a minute, each key on its own', async () => {
    let now = 1_000_000;
    const { calls, pool } = fakePool(() => Promise.resolve({ rowCount: 1 }));
    const record = keyUseRecorder(pool, () => now);
    const log = { warn: () => undefined };
    record('aaaa', log);
    record('aaaa', log);
    record('bbbb', log);
    now += 59_999;
    record('aaaa', log);
    expect(calls).toHaveLength(2);
    now += 1;
    record('aaaa', log);
    expect(calls).toHaveLength(3);
  });

  it('never throws: a failed write is logged with the key id and the error kind only, and tried again on the next use', async () => {
    const { calls, pool } = fakePool(() => Promise.reject(Object.assign(new Error('connection to gw_0123456789abcdef_secret lost'), { code: '57P01' })));
    const warnings: Array<[unknown, string]> = [];
    const record = keyUseRecorder(pool, () => 5_000_000);
    expect(() => record('0123456789abcdef', { warn: (obj: unknown, msg: string) => void warnings.push([obj, msg]) } as never)).not.toThrow();
    await settle();
    expect(warnings).toEqual([[{ key_id: '0123456789abcdef', err: { type: 'Error', code: '57P01' } }, 'could not record the API key use']]);
    expect(JSON.stringify(warnings)).not.toContain('secret');
    record('0123456789abcdef', { warn: () => undefined });
    expect(calls).toHaveLength(2);
  });
});
