import type { PolicyConfig } from '../config/policy-config.ts';
import type { InstancePausedForReview, QualitySignal } from '../events.ts';
import type { CustomerPolicyState } from '../state.ts';
import { qualityTotals } from './quality-buckets.ts';

const signal = (name: QualitySignal['signal'], count: number, volume: number, limits: { threshold: number; minVolume: number }): QualitySignal => {
  const rate = volume === 0 ? 0 : Math.round((count / volume) * 10_000) / 10_000;
  return { signal: name, rate, count, volume, threshold: limits.threshold, minVolume: limits.minVolume, crossed: volume >= limits.minVolume && rate >= limits.threshold };
};

/** The three quality signals of an instance over the configured window ending at `at`. */
export function qualitySignals(state: CustomerPolicyState, instanceId: string, at: number, config: PolicyConfig): QualitySignal[] {
  const { autoPause } = config;
  const t = qualityTotals(state.quality[instanceId], at, autoPause.windowHours);
  return [
    signal('violation_rate', t.violations, t.judged, autoPause.violationRate),
    signal('opt_out_rate', t.optOuts, t.accepted, autoPause.optOutRate),
    signal('delivery_failure_rate', t.failed, t.delivered + t.failed, autoPause.deliveryFailureRate),
  ];
}

/**
 * Pauses an instance whose quality crossed a threshold. Takes the state that already includes the
 * triggering fact; an instance already paused is left alone, so the pause is emitted exactly once.
 */
export function autoPauseCheck(state: CustomerPolicyState, instanceId: string, at: number, config: PolicyConfig): InstancePausedForReview[] {
  if (state.paused[instanceId]) return [];
  const signals = qualitySignals(state, instanceId, at, config);
  const crossed = signals.filter((s) => s.crossed);
  if (crossed.length === 0) return [];
  return [
    {
      type: 'InstancePausedForReview',
      customerId: state.customerId,
      at,
      instanceId,
      reason: `quality thresholds crossed: ${crossed.map((s) => s.signal).join(', ')}`,
      by: 'auto',
      signals,
    },
  ];
}
