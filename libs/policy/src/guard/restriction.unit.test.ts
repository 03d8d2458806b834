import { describe, expect, it } from 'vitest';
import type { PolicyEvent } from '../events.ts';
import { createPolicy } from '../policy.ts';
import { run, replay, type PolicyInput } from '../replay.ts';
import { activeCustomer, aSend, CUSTOMER, DAY, HOUR, INSTANCE, MINUTE, resumed, T0 } from '../testing/fixtures.ts';
import { accepted, autoPaused, given, rejected } from '../testing/given-when-then.ts';
import { contactLearned, lifted, newContacts, restricted, signalled } from './fixtures.ts';

// Back-off without an end time: 1 h, 6 h, then 24 h by the signals of the last 24 h; 3 signals
// in 24 h, or a ban, pause the instance for review.
const KNOWN = '+14155550999';
const known = () => contactLearned(KNOWN, T0 - DAY);
const newContact = (at: number) => newContacts(1, at, 0, 5)[0]!;
const reply = (at: number) => aSend({ recipient: KNOWN, occurredAt: at });

describe('instance_not_restricted', () => {
  it('given a reach-out time lock with an end time, then the instance is restricted until then: new contacts wait, replies go', () => {
    const until = T0 + 5 * HOUR;
    const spec = given([...activeCustomer(), known()]);
    spec.whenFact(signalled('reachout_timelock', T0, until)).then([restricted({ instanceId: INSTANCE, signal: 'reachout_timelock', until, signals: 1, at: T0 })]);

    const history = [...activeCustomer(), known(), signalled('reachout_timelock', T0, until), { type: 'InstanceRestricted', customerId: CUSTOMER, at: T0, instanceId: INSTANCE, signal: 'reachout_timelock', until, signals: 1 } as PolicyEvent];
    given(history)
      .when(newContact(T0 + HOUR))
      .then([rejected('sending_throttled')])
      .withDetails({ rule: 'instance_not_restricted', control: 'instance_restricted', retry_after_ms: 4 * HOUR, restriction_signal: 'reachout_timelock', restricted_until: new Date(until).toISOString(), signals: 1 });
    given(history).when(reply(T0 + HOUR)).then([accepted()]);
    given(history).when(newContact(until)).then([accepted()]);
  });

  it('without an end time (Evolution drops the code), the back-off grows with the signals of the day: 1 h, 6 h, 24 h, and the third pauses for review', () => {
    given([...activeCustomer(), known()])
      .whenFact([signalled('send_error', T0), signalled('send_error', T0 + 2 * HOUR), signalled('send_error', T0 + 3 * HOUR)])
      .then([
        restricted({ signal: 'send_error', until: T0 + HOUR, signals: 1 }),
        restricted({ until: T0 + 2 * HOUR + 6 * HOUR, signals: 2 }),
        restricted({ until: T0 + 3 * HOUR + DAY, signals: 3 }),
        autoPaused({ instanceId: INSTANCE, reason: 'network_restriction', at: T0 + 3 * HOUR }),
      ]);
  });

  it('signals older than the window do not count, and a later signal never shortens a restriction in force', () => {
    given(activeCustomer())
      .whenFact([signalled('send_error', T0 - 25 * HOUR), signalled('message_capping', T0), signalled('reachout_timelock', T0 + MINUTE, T0 + 10 * MINUTE)])
      .then([restricted({ signals: 1 }), restricted({ signal: 'message_capping', signals: 1, until: T0 + HOUR }), restricted({ signal: 'reachout_timelock', signals: 2, until: T0 + HOUR })]);
  });

  it('a ban restricts and pauses at once: every send gets 423 until resumed; the pause is emitted once', () => {
    const { events, state } = given([...activeCustomer(), known()])
      .whenFact([signalled('banned', T0), signalled('logged_out', T0 + MINUTE)])
      .then([restricted({ signal: 'banned', until: T0 + HOUR }), autoPaused({ reason: 'network_restriction' })]).outcome;
    expect(state.paused[INSTANCE]).toMatchObject({ reason: 'network_restriction', by: 'auto' });
    given([...activeCustomer(), known(), signalled('banned', T0), ...events]).when(reply(T0 + 2 * MINUTE)).then([rejected('instance_paused_for_review')]).withDetails({ reason: 'network_restriction', paused_by: 'auto' });
  });

  it('a logout (close 401) is recorded only: no restriction, no count towards the pause, new contacts still go', () => {
    given([...activeCustomer(), known()])
      .whenFact([signalled('logged_out', T0), signalled('send_error', T0 + MINUTE), signalled('logged_out', T0 + 2 * MINUTE), signalled('send_error', T0 + 3 * MINUTE)])
      .then([restricted({ signal: 'send_error', until: T0 + MINUTE + HOUR, signals: 1, at: T0 + MINUTE }), restricted({ signal: 'send_error', until: T0 + 3 * MINUTE + 6 * HOUR, signals: 2, at: T0 + 3 * MINUTE })]);
    given([...activeCustomer(), known(), signalled('logged_out', T0)]).when(newContact(T0 + MINUTE)).then([accepted()]);
  });

  it('a RestrictionLifted lifts it and starts the count afresh; so does InstanceResumed', () => {
    const signalledTwice = [signalled('send_error', T0), signalled('send_error', T0 + MINUTE)];
    const history = (lift: PolicyEvent) => {
      const { events } = given(activeCustomer()).whenFact([...signalledTwice, lift]).then([restricted(), restricted({ signals: 2 })]).outcome;
      return [...activeCustomer(), ...signalledTwice, ...events.slice(0, 2), lift];
    };
    for (const lift of [lifted(T0 + 2 * MINUTE), resumed(INSTANCE, T0 + 2 * MINUTE)]) {
      given(history(lift)).when(newContact(T0 + 3 * MINUTE)).then([accepted()]);
      given(history(lift)).whenFact(signalled('send_error', T0 + 4 * MINUTE)).then([restricted({ signals: 1, until: T0 + 4 * MINUTE + HOUR })]);
    }
  });

  it('an unreadable signal (no instance, unknown kind, a non-numeric end or one no Date holds) changes nothing', () => {
    const base = signalled('send_error', T0) as PolicyEvent & Record<string, unknown>;
    const spec = given(activeCustomer());
    for (const bad of [{ ...base, instanceId: '' }, { ...base, signal: 'weird' }, { ...base, until: 'soon' }, { ...base, until: 1e300 }] as PolicyEvent[]) {
      expect(spec.whenFact(bad).then([]).outcome.state.instances).toEqual(spec.state.instances);
    }
  });

  it('replays to the same decisions and state: the log (signals, what react derived, sends) rebuilds it', () => {
    const policy = createPolicy();
    const inputs: PolicyInput[] = [
      ...[...activeCustomer(), known(), signalled('send_error', T0)].map((event) => ({ kind: 'fact' as const, event })),
      ...[newContact(T0 + MINUTE), reply(T0 + MINUTE), newContact(T0 + 2 * HOUR)].map((command) => ({ kind: 'command' as const, command })),
      { kind: 'fact', event: signalled('reachout_timelock', T0 + 3 * HOUR, T0 + 4 * HOUR) },
      { kind: 'command', command: newContacts(1, T0 + 3 * HOUR + 1, 0, 6)[0]! },
    ];
    const first = run(inputs, CUSTOMER, policy);
    expect(first.decisions.map((d) => d.decision)).toEqual(['rejected', 'accepted', 'accepted', 'rejected']);
    expect(run(inputs, CUSTOMER, policy)).toEqual(first);
    expect(replay(first.log, CUSTOMER)).toEqual(first.state);
    expect(JSON.parse(JSON.stringify(first.state))).toEqual(first.state);
  });
});
