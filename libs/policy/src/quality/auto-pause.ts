import type { PolicyConfig } from '../config/policy-config.ts';
import type { InstancePausedForReview, QualitySignal } from '../events.ts';
import type { CustomerPolicyState, QualityBucket } from '../state.ts';
import { qualityTotals } from './quality-buckets.ts';
import { qualityOf } from '../instances.ts';

type AutoPauseConfig = PolicyConfig['autoPause'];
type Limits = { threshold: number; minVolume: number };

/** Each signal: its count and volume in the window's totals, and its limits in the config. */
const SIGNALS: ReadonlyArray<{ name: QualitySignal['signal']; count: (t: QualityBucket) => number; volume: (t: QualityBucket) => number; limits: (a: AutoPauseConfig) => Limits }> = [
  { name: 'violation_rate', count: (t) => t.violations, volume: (t) => t.judged, limits: (a) => a.violationRate },
  { name: 'opt_out_rate', count: (t) => t.optOuts, volume: (t) => t.accepted, limits: (a) => a.optOutRate },
  { name: 'delivery_failure_rate', count: (t) => t.failed, volume: (t) => t.delivered + t.failed, limits: (a) => a.deliveryFailureRate },
];

const rateOf = (count: number, volume: number): number => (volume === 0 ? 0 : Math.round((count / volume) * 10_000) / 10_000);
const crosses = (count: number, volume: number, limits: Limits): boolean => volume >= limits.minVolume && rateOf(count, volume) >= limits.threshold;

function signalsOf(totals: QualityBucket, autoPause: AutoPauseConfig): QualitySignal[] {
  return SIGNALS.map((signal) => {
    const count = signal.count(totals);
    const volume = signal.volume(totals);
    const limits = signal.limits(autoPause);
    return { signal: signal.name, rate: rateOf(count, volume), count, volume, threshold: limits.threshold, minVolume: limits.minVolume, crossed: crosses(count, volume, limits) };
  });
}

/** The three quality signals of an instance over the configured window ending at `at`. */
export function qualitySignals(state: CustomerPolicyState, instanceId: string, at: number, config: PolicyConfig): QualitySignal[] {
  return signalsOf(qualityTotals(qualityOf(state.instances, instanceId), at, config.autoPause.windowHours), config.autoPause);
}

/**
 * Pauses an instance whose quality crossed a threshold. Takes the state that already includes the
 * triggering fact; an instance already paused is left alone, so the pause is emitted exactly once.
 */
export function autoPauseCheck(state: CustomerPolicyState, instanceId: string, at: number, config: PolicyConfig): InstancePausedForReview[] {
  if (state.paused[instanceId]) return [];
  const { autoPause } = config;
  const totals = qualityTotals(qualityOf(state.instances, instanceId), at, autoPause.windowHours);
  // Asked after every decision, and almost always no: the signals (for the pause event) are built only when one crossed.
  if (!SIGNALS.some(({ count, volume, limits }) => crosses(count(totals), volume(totals), limits(autoPause)))) return [];
  const signals = signalsOf(totals, autoPause);
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
