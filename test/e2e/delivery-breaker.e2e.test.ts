import { describe, expect, it } from 'vitest';
import { demoAccount } from '../support/accounts.ts';
import { send } from '../support/http.ts';
import { useStack } from '../support/suite.ts';

// A short reset so the test sees the breaker close again.
const suite = useStack({ env: { DELIVERY_BREAKER_RESET_MS: '1500' } });

describe('instance manager down', () => {
  it('opens the circuit breaker: sends then fail fast with 502 circuit_open, and recover when the manager does', async () => {
    const account = await demoAccount(suite.stack);
    const body = (n: number) => ({ instance_id: account.instance_id, phone: `+141555507${String(n).padStart(2, '0')}`, message: `breaker ${n}`, message_purpose: 'operational' });
    const sim = suite.stack.simulator;
    expect((await sim.call('PUT', '/sim/faults', { body: { mode: 'error_5xx' } })).status).toBeLessThan(300);
    try {
      const reasons: string[] = [];
      for (let n = 0; n < 12; n++) {
        const result = await send(suite.stack.apiUrl, account.api_key, body(n));
        expect(result.status, JSON.stringify(result.body)).toBe(502);
        expect(result.body.error).toBe('gateway_send_failed');
        reasons.push(result.body.details.reason);
      }
      // The manager's errors first, then the breaker answers without calling it.
      expect(reasons[0]).toBe('manager_error');
      expect(reasons.slice(-3)).toEqual(['circuit_open', 'circuit_open', 'circuit_open']);
      const callsWhileOpen = reasons.filter((r) => r === 'circuit_open').length;
      expect(callsWhileOpen).toBeGreaterThan(0);
    } finally {
      await sim.call('DELETE', '/sim/faults');
    }
    // Half-open after the reset time: the next send goes through and closes the breaker.
    await new Promise((r) => setTimeout(r, 2000));
    const recovered = await send(suite.stack.apiUrl, account.api_key, body(99));
    expect(recovered.status, JSON.stringify(recovered.body)).toBe(200);
    const ledger: Array<{ text: string }> = (await sim.call('GET', '/sim/ledger')).body.messages;
    expect(ledger.filter((m) => m.text.startsWith('breaker ')).map((m) => m.text)).toEqual(['breaker 99']);
  });
});
