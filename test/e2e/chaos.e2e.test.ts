import { describe, expect, it } from 'vitest';
import { failures, formatReport, runChaos } from '../chaos/scenario.ts';

// The short fault suite (the whole one is `make chaos`): sustained sends with Idempotency-Keys
// from retrying clients while the delivery consumer is killed mid-send (sends held by a slow
// manager that still sends them, by one that answers late, and by one that dies with them), the
// policy and delivery consumers are killed together, Postgres drops our connections and the
// broker restarts. Then: nothing lost, nothing sent twice, every message answered, none failed
// (not even `outcome_unknown`: the simulator's store is on), one webhook delivery id per message.
describe('faults under load', () => {
  it('lose nothing, send nothing twice, and leave no message without a final answer', async () => {
    const report = await runChaos({
      faults: [
        { kind: 'kill', services: ['delivery'], interruptSends: true },
        { kind: 'kill', services: ['policy', 'delivery'], interruptSends: true },
        { kind: 'drop-postgres-connections' },
        { kind: 'restart-broker' },
      ],
      clients: 8,
      pauseMs: 3_000,
      tailMs: 3_000,
    });
    console.log(formatReport(report));
    expect(report.counts.messages).toBeGreaterThan(100);
    expect(report.resolutions.length).toBe(2);
    expect(failures(report.counts)).toEqual([]);
  }, 600_000);
});
