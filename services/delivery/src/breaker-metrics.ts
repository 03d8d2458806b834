import { Gauge, type Registry } from 'prom-client';
import type { ManagerBreakers } from '@gw/evolution';

/**
 * The instance managers' circuit breakers by state, counted at each scrape: while one is open,
 * every send through that manager fails fast (circuit_open). Counts, not one series per manager:
 * the label set stays three series however many managers there are, and names no manager URL.
 */
export function breakerMetrics(registry: Registry, breakers: ManagerBreakers): void {
  new Gauge({
    name: 'gateway_circuit_breakers',
    help: 'Circuit breakers of the instance managers by state: open (sends fail fast), half_open (one trial send), closed',
    labelNames: ['state'],
    registers: [registry],
    collect() {
      const { open, halfOpen, closed } = breakers.states();
      this.set({ state: 'open' }, open);
      this.set({ state: 'half_open' }, halfOpen);
      this.set({ state: 'closed' }, closed);
    },
  });
}
