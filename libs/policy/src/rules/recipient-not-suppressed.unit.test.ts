import { describe, expect, it } from 'vitest';
import type { PolicyEvent } from '../events.ts';
import { createPolicy } from '../policy.ts';
import { replay, run, type PolicyInput } from '../replay.ts';
import { activeCustomer, aSend, CUSTOMER, HOUR, identityLinked, INSTANCE, LID, RECIPIENT, suppressed, T0, unsuppressed } from '../testing/fixtures.ts';
import { given } from '../testing/given-when-then.ts';
import type { SendCommand } from '../types.ts';

describe('recipient_not_suppressed', () => {
  it('given the recipient opted out, then 403 recipient_suppressed with source opt_out', () => {
    given([...activeCustomer(), suppressed(RECIPIENT, 'opt_out')]).when(aSend()).thenRejected('recipient_suppressed', { rule: 'recipient_not_suppressed', source: 'opt_out' });
  });

  it('given a manual suppression entered unnormalised, then the E.164 recipient is still refused', () => {
    given([...activeCustomer(), suppressed('+1 (415) 555-2671', 'manual')]).when(aSend({ recipient: '+14155552671' })).thenRejected('recipient_suppressed', { source: 'manual' });
  });

  it('given another recipient is suppressed, then this one passes', () => {
    given([...activeCustomer(), suppressed('+14155550000')]).when(aSend()).thenAccepted();
  });

  it('given both sources, when one is lifted, then the other still refuses; when both are lifted, it passes', () => {
    const both = [...activeCustomer(), suppressed(RECIPIENT, 'opt_out'), suppressed(RECIPIENT, 'manual')];
    given(both).when(aSend()).thenRejected('recipient_suppressed', { source: 'opt_out', sources: ['opt_out', 'manual'] });
    given([...both, unsuppressed(RECIPIENT, 'opt_out')]).when(aSend()).thenRejected('recipient_suppressed', { source: 'manual' });
    given([...both, unsuppressed(RECIPIENT, 'opt_out'), unsuppressed('+1 415 555 2671', 'manual')]).when(aSend()).thenAccepted();
  });
});

describe('recipient_not_suppressed, senders known by a linked id (@lid)', () => {
  const engine = createPolicy();
  const fact = (event: PolicyEvent): PolicyInput => ({ kind: 'fact', event });
  const send = (overrides: Partial<SendCommand> = {}): PolicyInput => ({ kind: 'command', command: aSend(overrides) });
  /** The engine as the consumer runs it (facts reacted to); a replay of its log must decide the same. */
  const runAndReplay = (inputs: PolicyInput[]) => {
    const result = run(inputs, CUSTOMER, engine);
    expect(replay(result.log, CUSTOMER)).toEqual(result.state);
    expect(run(inputs, CUSTOMER, engine).decisions).toEqual(result.decisions);
    return result;
  };

  it('given the linked id opted out and then its number is learned, then a send to the number is refused via the linked id', () => {
    given([...activeCustomer(), suppressed(LID, 'opt_out', T0 - HOUR, INSTANCE), identityLinked()])
      .when(aSend())
      .thenRejected('recipient_suppressed', { rule: 'recipient_not_suppressed', source: 'opt_out', via: 'linked_id' });
    const result = runAndReplay([...activeCustomer().map(fact), fact(suppressed(LID, 'opt_out', T0 - HOUR, INSTANCE)), fact(identityLinked()), send()]);
    expect(result.decisions.at(-1)).toMatchObject({ decision: 'rejected', code: 'recipient_suppressed', details: { via: 'linked_id' } });
    // The number took the suppression over (same source, reason and time), the linked id kept its own.
    expect(result.log).toContainEqual({ type: 'RecipientSuppressed', customerId: CUSTOMER, at: T0 - HOUR, recipient: RECIPIENT, source: 'opt_out', reason: 'STOP', by: 'recipient', linkedFrom: LID });
    expect(Object.keys(result.state.suppressed).sort()).toEqual([RECIPIENT, LID].sort());
    // Neither the details nor the message name the number or the linked id.
    expect(JSON.stringify(result.decisions.at(-1))).not.toMatch(/4155552671|123456789012345/);
    // One opt-out, counted once against the instance's quality.
    expect(result.state.quality[INSTANCE]!.reduce((n, b) => n + b.optOuts, 0)).toBe(1);
  });

  it('given the link learned first, when the linked id opts out, then the number is refused', () => {
    given([...activeCustomer(), identityLinked(), suppressed(LID)]).when(aSend()).thenRejected('recipient_suppressed', { via: 'linked_id' });
    const result = runAndReplay([...activeCustomer().map(fact), fact(identityLinked()), fact(suppressed(LID)), send()]);
    expect(result.decisions.at(-1)).toMatchObject({ decision: 'rejected', code: 'recipient_suppressed', details: { source: 'opt_out', via: 'linked_id' } });
    expect(result.state.suppressed[RECIPIENT]?.opt_out).toMatchObject({ reason: 'STOP', via: 'linked_id' });
  });

  it('given the link learned on another instance, then the number is refused on every instance (a linked id names the person)', () => {
    const events = [...activeCustomer(), suppressed(LID, 'opt_out', T0 - HOUR, INSTANCE), identityLinked(LID, RECIPIENT, 'ins_2')];
    given(events).when(aSend({ instanceId: INSTANCE })).thenRejected('recipient_suppressed', { via: 'linked_id' });
    given(events).when(aSend({ instanceId: 'ins_2' })).thenRejected('recipient_suppressed', { via: 'linked_id' });
    const result = runAndReplay([...events.map(fact), send({ instanceId: INSTANCE })]);
    expect(result.decisions.at(-1)).toMatchObject({ decision: 'rejected', code: 'recipient_suppressed' });
    expect(result.state.identities).toEqual({ ins_2: { phones: { [LID]: RECIPIENT }, lids: { [RECIPIENT]: [LID] } } });
  });

  it('given the linked id opted out and was linked, when it opts back in (or the number is lifted), then the number is allowed again', () => {
    const optedOut = [...activeCustomer(), suppressed(LID), identityLinked()];
    const viaLid = runAndReplay([...optedOut.map(fact), fact(unsuppressed(LID)), send()]);
    expect(viaLid.decisions.at(-1)).toMatchObject({ decision: 'accepted' });
    expect(viaLid.state.suppressed).toEqual({});
    const viaNumber = runAndReplay([...optedOut.map(fact), fact(unsuppressed(RECIPIENT)), send()]);
    expect(viaNumber.decisions.at(-1)).toMatchObject({ decision: 'accepted' });
    expect(viaNumber.state.suppressed).toEqual({});
  });

  it('given a suppressed linked id linked to another number, then this number is accepted and that one refused', () => {
    const other = '+14155550000';
    const events = [...activeCustomer(), suppressed(LID), identityLinked(LID, other)];
    given(events).when(aSend()).thenAccepted();
    given(events).when(aSend({ recipient: other })).thenRejected('recipient_suppressed', { via: 'linked_id' });
    // A suppression of a linked id is kept as the linked id (not mangled into a number).
    expect(given([suppressed(' 123456789012345@LID ')]).state.suppressed).toHaveProperty([LID]);
  });

  it('given a link it cannot read (no linked id, no number, no instance), then it changes nothing and emits nothing', () => {
    const unreadable = [
      { ...identityLinked(), lid: '4155552671' },
      { ...identityLinked(), phone: 'not a number' },
      { ...identityLinked(), instanceId: '' },
    ] as PolicyEvent[];
    const result = runAndReplay([...activeCustomer().map(fact), fact(suppressed(LID)), ...unreadable.map(fact), send()]);
    expect(result.decisions.at(-1)).toMatchObject({ decision: 'accepted' });
    expect(result.state.identities).toEqual({});
    expect(result.log.filter((e) => e.type === 'RecipientSuppressed')).toHaveLength(1);
  });
});
