// The value axis of a chart: from 0 to a round maximum, in about four round steps (1, 2 or 5 times a
// power of ten), so the gridlines read as plain numbers (0, 50, 100, 150). Counts only: the step
// is never below 1.

export interface Scale {
  /** The top of the axis (at least the largest value). */
  max: number;
  step: number;
  /** 0, step, 2·step … max. */
  ticks: number[];
}

/** The round step nearest `raw`: 1, 2 or 5 times a power of ten, at least 1. */
export function niceStep(raw: number): number {
  if (!(raw > 1)) return 1;
  const power = 10 ** Math.floor(Math.log10(raw));
  const fraction = raw / power;
  const nice = fraction < 1.5 ? 1 : fraction < 3 ? 2 : fraction < 7 ? 5 : 10;
  return nice * power;
}

/** The axis for values up to `largest` (an empty chart still gets 0 to 1). */
export function niceScale(largest: number, targetTicks = 4): Scale {
  const top = Math.max(0, Math.ceil(Number.isFinite(largest) ? largest : 0));
  if (top === 0) return { max: 1, step: 1, ticks: [0, 1] };
  const step = niceStep(top / targetTicks);
  const max = Math.ceil(top / step) * step;
  const ticks: number[] = [];
  for (let tick = 0; tick <= max; tick += step) ticks.push(tick);
  return { max, step, ticks };
}

/** Where a value sits on an axis of `length` pixels that grows upwards from `bottom`. */
export const scaleY = (scale: Scale, bottom: number, length: number) => (value: number) => bottom - (value / scale.max) * length;
