import { describe, expect, it } from 'vitest';
import type { PolicyEvent, RecipientSuppressed, RecipientUnsuppressed } from '../events.ts';
import { createPolicy } from '../policy.ts';
import { qualityOf } from '../instances.ts';
import { replay, run, type PolicyInput } from '../replay.ts';
import { activeCustomer, aSend, CUSTOMER, HOUR, identityLinked, INSTANCE, LID, MINUTE, RECIPIENT, suppressed, T0, unsuppressed } from '../testing/fixtures.ts';
import { accepted, given, rejected } from '../testing/given-when-then.ts';
import type { SendCommand } from '../types.ts';

describe('recipient_not_suppressed', () => {
  it('given the recipient opted out, then 403 recipient_suppressed with source opt_out', () => {
    given([...activeCustomer(), suppressed(RECIPIENT, 'opt_out')]).when(aSend()).then([rejected('recipient_suppressed')]).withDetails({ rule: 'recipient_not_suppressed', source: 'opt_out' });
  });

  it('given a manual suppression entered unnormalised, then the E.164 recipient is still refused', () => {
    given([...activeCustomer(), suppressed('+1 (415) 555-2671', 'manual')]).when(aSend({ recipient: '+14155552671' })).then([rejected('recipient_suppressed')]).withDetails({ source: 'manual' });
  });

  it('given another recipient is suppressed, then this one passes', () => {
    given([...activeCustomer(), suppressed('+14155550000')]).when(aSend()).then([accepted()]);
  });

  it('given both sources, when one is lifted, then the other still refuses; when both are lifted, it passes', () => {
    const both = [...activeCustomer(), suppressed(RECIPIENT, 'opt_out'), suppressed(RECIPIENT, 'manual')];
    given(both).when(aSend()).then([rejected('recipient_suppressed')]).withDetails({ source: 'opt_out', sources: ['opt_out', 'manual'] });
    given([...both, unsuppressed(RECIPIENT, 'opt_out')]).when(aSend()).then([rejected('recipient_suppressed')]).withDetails({ source: 'manual' });
    given([...both, unsuppressed(RECIPIENT, 'opt_out'), unsuppressed('+1 415 555 2671', 'manual')]).when(aSend()).then([accepted()]);
  });
});

describe('recipient_not_suppressed, senders known by a linked id (@lid)', () => {
  const lidOptedOut = suppressed(LID, 'opt_out', T0 - HOUR, INSTANCE);
  /** What react appends when the linked id's opt-out moves to its number: same source, reason and time, not counted again. */
  const carriedTo = (phone: string): RecipientSuppressed => ({
    type: 'RecipientSuppressed', customerId: CUSTOMER, at: T0 - HOUR, recipient: phone, source: 'opt_out', reason: 'STOP', by: 'recipient', linkedFrom: LID,
  });
  /** What react appends when one of the person's identities is lifted: the lift of the other. */
  const liftedWith = (recipient: string, linkedFrom: string): RecipientUnsuppressed => ({
    type: 'RecipientUnsuppressed', customerId: CUSTOMER, at: T0 - MINUTE, recipient, source: 'opt_out', by: 'ops', linkedFrom,
  });

  it('given the linked id opted out, when its number is learned, then the suppression is carried to the number and a send to it is refused via the linked id', () => {
    const { state } = given([...activeCustomer(), lidOptedOut]).whenFact(identityLinked()).then([carriedTo(RECIPIENT)]).outcome;
    expect(Object.keys(state.suppressed).sort()).toEqual([RECIPIENT, LID].sort());
    // One opt-out, counted once against the instance's quality.
    expect(qualityOf(state.instances, INSTANCE)!.reduce((n, b) => n + b.optOuts, 0)).toBe(1);

    const { decisions } = given([...activeCustomer(), lidOptedOut, identityLinked(), carriedTo(RECIPIENT)])
      .when(aSend())
      .then([rejected('recipient_suppressed', { recipient: RECIPIENT })])
      .withDetails({ rule: 'recipient_not_suppressed', source: 'opt_out', via: 'linked_id' });
    // Neither the details nor the message name the number or the linked id.
    expect(JSON.stringify(decisions)).not.toMatch(/4155552671|123456789012345/);
  });

  it('given the link learned first, when the linked id opts out, then the suppression is carried to the number and the number is refused', () => {
    const { state } = given([...activeCustomer(), identityLinked()]).whenFact(suppressed(LID)).then([carriedTo(RECIPIENT)]).outcome;
    expect(state.suppressed[RECIPIENT]?.opt_out).toMatchObject({ reason: 'STOP', via: 'linked_id' });
    given([...activeCustomer(), identityLinked(), suppressed(LID), carriedTo(RECIPIENT)])
      .when(aSend())
      .then([rejected('recipient_suppressed')])
      .withDetails({ source: 'opt_out', via: 'linked_id' });
  });

  it('given the link learned on another instance, then the number is refused on every instance (a linked id names the person)', () => {
    const linkedOnIns2 = identityLinked(LID, RECIPIENT, 'ins_2');
    const { state } = given([...activeCustomer(), lidOptedOut]).whenFact(linkedOnIns2).then([carriedTo(RECIPIENT)]).outcome;
    expect(state.identities).toEqual({ ins_2: { phones: { [LID]: RECIPIENT }, lids: { [RECIPIENT]: [LID] } } });
    const log = [...activeCustomer(), lidOptedOut, linkedOnIns2, carriedTo(RECIPIENT)];
    given(log).when(aSend({ instanceId: INSTANCE })).then([rejected('recipient_suppressed', { instanceId: INSTANCE })]).withDetails({ via: 'linked_id' });
    given(log).when(aSend({ instanceId: 'ins_2' })).then([rejected('recipient_suppressed', { instanceId: 'ins_2' })]).withDetails({ via: 'linked_id' });
  });

  it('given the linked id opted out and was linked, when it opts back in (or the number is lifted), then the other is lifted too and the number is allowed again', () => {
    const optedOut = [...activeCustomer(), suppressed(LID), identityLinked(), carriedTo(RECIPIENT)];
    const viaLid = given(optedOut).whenFact(unsuppressed(LID)).then([liftedWith(RECIPIENT, LID)]).outcome;
    expect(viaLid.state.suppressed).toEqual({});
    given([...optedOut, unsuppressed(LID), ...viaLid.events]).when(aSend()).then([accepted()]);

    const viaNumber = given(optedOut).whenFact(unsuppressed(RECIPIENT)).then([liftedWith(LID, RECIPIENT)]).outcome;
    expect(viaNumber.state.suppressed).toEqual({});
    given([...optedOut, unsuppressed(RECIPIENT), ...viaNumber.events]).when(aSend()).then([accepted()]);
  });

  it('given a suppressed linked id linked to another number, then that number takes the suppression: it is refused and this one accepted', () => {
    const other = '+14155550000';
    given([...activeCustomer(), suppressed(LID)]).whenFact(identityLinked(LID, other)).then([carriedTo(other)]);
    const log = [...activeCustomer(), suppressed(LID), identityLinked(LID, other), carriedTo(other)];
    given(log).when(aSend()).then([accepted()]);
    given(log).when(aSend({ recipient: other })).then([rejected('recipient_suppressed', { recipient: other })]).withDetails({ via: 'linked_id' });
    // A suppression of a linked id is kept as the linked id (not mangled into a number).
    expect(given([suppressed(' 123456789012345@LID ')]).state.suppressed).toHaveProperty([LID]);
  });

  it('given a link it cannot read (no linked id, no number, no instance), then it changes nothing and emits nothing', () => {
    const unreadable = [
      { ...identityLinked(), lid: '4155552671' },
      { ...identityLinked(), phone: 'not a number' },
      { ...identityLinked(), instanceId: '' },
    ] as PolicyEvent[];
    const { state } = given([...activeCustomer(), suppressed(LID)]).whenFact(unreadable).then([]).outcome;
    expect(state.identities).toEqual({});
    given([...activeCustomer(), suppressed(LID), ...unreadable]).when(aSend()).then([accepted()]);
  });

  it('a replay of the log the engine appended (carried suppressions and lifts included) rebuilds its state and decides the same', () => {
    const engine = createPolicy();
    const fact = (event: PolicyEvent): PolicyInput => ({ kind: 'fact', event });
    const send = (overrides: Partial<SendCommand> = {}): PolicyInput => ({ kind: 'command', command: aSend(overrides) });
    const scenarios: PolicyInput[][] = [
      [fact(lidOptedOut), fact(identityLinked()), send()],
      [fact(identityLinked()), fact(suppressed(LID)), send()],
      [fact(lidOptedOut), fact(identityLinked(LID, RECIPIENT, 'ins_2')), send({ instanceId: INSTANCE })],
      [fact(suppressed(LID)), fact(identityLinked()), fact(unsuppressed(LID)), send()],
      [fact(suppressed(LID)), fact(identityLinked()), fact(unsuppressed(RECIPIENT)), send()],
      [fact(suppressed(LID)), fact({ ...identityLinked(), lid: '4155552671' } as PolicyEvent), send()],
    ];
    for (const scenario of scenarios) {
      const inputs = [...activeCustomer().map(fact), ...scenario];
      const result = run(inputs, CUSTOMER, engine);
      expect(replay(result.log, CUSTOMER)).toEqual(result.state);
      expect(run(inputs, CUSTOMER, engine).decisions).toEqual(result.decisions);
    }
  });
});
