import { performance } from 'node:perf_hooks';
import { createPolicy, evolve, handleCommand, initialPolicyState, type PolicyEvent, type SendCommand } from '@gw/policy';

const START = Date.UTC(2026, 0, 1);

/**
 * Micro-benchmark for `make bench`: decides and folds n commands of one very busy customer (scale
 * plan with a generous override, 20 instances, 2000 recipients, one send every `gapMs` of command
 * time — 2 s is ~43,000 a day, 20x the scale plan, so the remembered day of sends is large — a
 * suppressed recipient, a promotional text now and then). Returns decisions per second.
 * Wall-clock time is read here only to measure; the decider itself never sees it.
 */
export function benchDecider(n: number, gapMs = 2_000, history = 0): number {
  return deciderRun(n, gapMs, history).perSecond;
}

/** benchDecider, and the size of the customer's state as the policy service snapshots it (JSON) at the end. */
export function deciderRun(n: number, gapMs = 2_000, history = 0): { perSecond: number; snapshotBytes: number } {
  const customerId = 'cus_bench';
  const policy = createPolicy();
  const setup: PolicyEvent[] = [
    { type: 'CustomerRegistered', customerId, at: START },
    { type: 'PlanChanged', customerId, at: START, planId: 'scale', validUntil: START + 400 * 86_400_000, by: 'bench', reason: 'bench' },
    { type: 'LimitsOverridden', customerId, at: START, daily: 1_000_000, monthly: 10_000_000, velocity: { burst: 1_000, refillPerMinute: 10_000 }, grantedBy: 'bench', reason: 'bench' },
    { type: 'RecipientSuppressed', customerId, at: START, recipient: '+14155550007', source: 'opt_out', reason: 'STOP', by: 'recipient' },
  ];
  let state = setup.reduce(evolve, initialPolicyState(customerId));
  const commands: SendCommand[] = Array.from({ length: history + n }, (_, i) => ({
    commandId: `cmd_${i}`,
    customerId,
    instanceId: `ins_${i % 20}`,
    recipient: `+1415555${String(i % 2000).padStart(4, '0')}`,
    purpose: 'transactional',
    text: i % 50 === 0 ? 'Flash sale! 20% off everything' : `Your order ${100_000 + i} has shipped and arrives tomorrow.`,
    occurredAt: START + i * gapMs,
    source: 'api',
  }));

  // `history` commands first, untimed: the remembered day of sends the timed ones are decided on.
  for (const command of commands.slice(0, history)) state = handleCommand(command, state, policy).state;
  const started = performance.now();
  for (const command of commands.slice(history)) state = handleCommand(command, state, policy).state;
  const seconds = (performance.now() - started) / 1000;
  return { perSecond: Math.round(n / Math.max(seconds, 1e-9)), snapshotBytes: JSON.stringify(state).length };
}
