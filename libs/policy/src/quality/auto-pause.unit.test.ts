import { describe, expect, it } from 'vitest';
import { activeCustomer, aSend, delivery, HOUR, INSTANCE, resumed, suppressed, T0 } from '../testing/fixtures.ts';
import { accepted, autoPaused, given, rejected, times } from '../testing/given-when-then.ts';

// Defaults: violations >= 20 % of at least 20 judged sends; opt-outs >= 5 % of at least 40 sent;
// failed deliveries >= 30 % of at least 20 outcomes; all over the last 24 h.
const spaced = (n: number, text: (i: number) => string, from = T0) =>
  Array.from({ length: n }, (_, i) => aSend({ recipient: `+1415558${String(i).padStart(4, '0')}`, text: text(i), occurredAt: from + i * 10_000 }));
const good = (n: number, from = T0) => spaced(n, (i) => `Your order ${5000 + i} has shipped.`, from);
const bad = (n: number, from = T0) => spaced(n, (i) => `Flash sale ${i}: 20% off`, from);
const violation = rejected('policy_violation', { reason: 'promotional_content' });

describe('auto-pause for review', () => {
  it('when the violation rate crosses 20 % with enough volume, then InstancePausedForReview is emitted exactly once, by auto, with the signals', () => {
    // 16 good then 4 bad: the 20th judged send makes 4/20 = 20 %; afterwards every send of that instance is refused with 423.
    given(activeCustomer())
      .when([...good(16), ...bad(4, T0 + 200_000), ...good(3, T0 + 400_000)])
      .then([
        ...times(16, accepted()),
        ...times(4, violation),
        autoPaused({
          instanceId: INSTANCE,
          at: T0 + 200_000 + 30_000,
          signals: [{ signal: 'violation_rate', rate: 0.2, count: 4, volume: 20, crossed: true }, { crossed: false }, { crossed: false }],
        }),
        ...times(3, rejected('instance_paused_for_review')),
      ]);
  });

  it('below the minimum volume nothing happens, however bad the rate', () => {
    given(activeCustomer()).when(bad(19)).then(times(19, violation));
  });

  it('resume clears the pause and starts counting afresh, so the old window does not re-pause', () => {
    const { events } = given(activeCustomer()).when([...good(16), ...bad(4, T0 + 200_000)]).then([...times(16, accepted()), ...times(4, violation), autoPaused()]).outcome;
    const history = [...activeCustomer(), ...events, resumed(INSTANCE, T0 + HOUR)];
    given(history).when([...bad(1, T0 + 2 * HOUR), ...good(5, T0 + 2 * HOUR + 10_000)]).then([violation, ...times(5, accepted())]);
  });

  it('a window older than 24 h no longer counts', () => {
    given(activeCustomer()).when([...good(16), ...bad(3, T0 + 200_000), ...bad(1, T0 + 25 * HOUR)]).then([...times(16, accepted()), ...times(4, violation)]);
  });

  it('when failed deliveries reach 30 % of at least 20 outcomes, then react pauses the instance once', () => {
    const outcomes = [...Array.from({ length: 14 }, (_, i) => delivery(true, T0 + i)), ...Array.from({ length: 8 }, (_, i) => delivery(false, T0 + 100 + i))];
    const { state } = given(activeCustomer())
      .whenFact(outcomes)
      .then([autoPaused({ instanceId: INSTANCE, at: T0 + 105, signals: [{ crossed: false }, { crossed: false }, { signal: 'delivery_failure_rate', count: 6, volume: 20, crossed: true }] })])
      .outcome;
    expect(state.paused[INSTANCE]?.by).toBe('auto');
  });

  it('when opt-outs received on the instance reach 5 % of at least 40 sends, then react pauses it', () => {
    const { events } = given(activeCustomer()).when(good(40)).then(times(40, accepted())).outcome;
    const history = [...activeCustomer(), ...events];
    const optOut = (i: number) => suppressed(`+1415558${String(i).padStart(4, '0')}`, 'opt_out', T0 + 500_000 + i, INSTANCE);
    given(history).whenFact([optOut(0)]).then([]);
    given(history)
      .whenFact([optOut(0), optOut(1)])
      .then([autoPaused({ at: T0 + 500_001, signals: [{}, { signal: 'opt_out_rate', count: 2, volume: 40, rate: 0.05, crossed: true }, {}] })]);
  });

  it('a manual suppression or a successful delivery never pauses', () => {
    given(activeCustomer()).whenFact([suppressed(undefined, 'manual', T0, INSTANCE), delivery(true)]).then([]);
  });
});
