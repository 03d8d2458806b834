import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Registry } from 'prom-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManagerBreakers } from '@gw/evolution';
import { breakerMetrics } from './breaker-metrics.ts';

// A manager that answers every call with a 500: its breaker opens after the breaker's volume threshold.
let manager: Server;
let managerUrl: string;
beforeAll(async () => {
  manager = createServer((_request, response) => response.writeHead(500).end('down'));
  await new Promise<void>((resolve) => manager.listen(0, '127.0.0.1', resolve));
  managerUrl = `http://127.0.0.1:${(manager.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise((resolve) => manager.close(resolve));
});

async function scrape(registry: Registry): Promise<Record<string, number>> {
  const metric = await registry.getSingleMetric('gateway_circuit_breakers')!.get();
  return Object.fromEntries(metric.values.map((v) => [String(v.labels.state), v.value]));
}

describe('gateway_circuit_breakers', () => {
  it('counts the breakers by state at each scrape: none, closed after a send, open once the manager keeps failing', async () => {
    const breakers = new ManagerBreakers({ resetTimeoutMs: 60_000 });
    const registry = new Registry();
    breakerMetrics(registry, breakers);
    try {
      expect(await scrape(registry)).toEqual({ open: 0, half_open: 0, closed: 0 });
      const send = () => breakers.send({ managerUrl, apiKey: 'k', instance: 'front-desk', phone: '+14155552671', text: 'hello', timeoutMs: 2_000 });
      expect((await send()).kind).toBe('failed');
      expect(await scrape(registry)).toEqual({ open: 0, half_open: 0, closed: 1 });
      const reasons: string[] = [];
      for (let i = 0; i < 6; i++) {
        const result = await send();
        reasons.push(result.kind === 'failed' ? result.reason : result.kind);
      }
      expect(reasons).toContain('circuit_open');
      expect(await scrape(registry)).toEqual({ open: 1, half_open: 0, closed: 0 });
      // The text a scrape serves: no manager URL, no phone number.
      const text = await registry.metrics();
      expect(text).toContain('gateway_circuit_breakers{state="open"} 1');
      expect(text).not.toContain('127.0.0.1');
      expect(text).not.toContain('4155552671');
    } finally {
      breakers.shutdown();
    }
  });
});
