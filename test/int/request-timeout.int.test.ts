import { describe, expect, it } from 'vitest';
import { REQUEST_TIMEOUT_MS, type LimitedFetch } from '../support/request-timeout.ts';

describe('the int tier', () => {
  it('runs with the request time limit installed (vitest.config.ts setupFiles)', () => {
    expect((globalThis.fetch as Partial<LimitedFetch>).requestTimeoutMs).toBe(REQUEST_TIMEOUT_MS);
  });
});
