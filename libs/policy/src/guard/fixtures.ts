// Test fixtures of the number guard's facts (the specs of guard/ use them with testing/fixtures.ts).
import type { ExpectedEvent, Fields } from '../testing/given-when-then.ts';
import { aSend, CUSTOMER, INSTANCE, T0 } from '../testing/fixtures.ts';
import type { SendCommand } from '../types.ts';
import type { PolicyEvent } from '../events.ts';
import type { InstanceRestricted, RestrictionSignal } from './events.ts';

export const connected = (firstConnectedAt: number, instanceId = INSTANCE, at = firstConnectedAt): PolicyEvent => ({
  type: 'InstanceConnected', customerId: CUSTOMER, at, instanceId, firstConnectedAt,
});

export const contactLearned = (contact: string, at = T0 - 60_000, instanceId = INSTANCE): PolicyEvent => ({
  type: 'ContactLearned', customerId: CUSTOMER, at, instanceId, contact,
});

export const signalled = (signal: RestrictionSignal, at = T0, until: number | null = null, instanceId = INSTANCE): PolicyEvent => ({
  type: 'RestrictionSignalled', customerId: CUSTOMER, at, instanceId, signal, code: signal === 'reachout_timelock' ? '463' : null, until, messageId: 'msg_1', recipient: '+14155550100',
});

export const lifted = (at: number, instanceId = INSTANCE): PolicyEvent => ({
  type: 'RestrictionLifted', customerId: CUSTOMER, at, instanceId, by: 'alice', reason: 'reviewed',
});

/** The engine's InstanceRestricted, with the fields the spec is about. */
export const restricted = (fields: Fields<InstanceRestricted> = {}): ExpectedEvent => ({ type: 'InstanceRestricted', ...fields });

/** n sends to distinct new recipients (+1415777<series><nnn>) `gapMs` apart, each with its own body; `series` keeps sets apart. */
export const newContacts = (n: number, from: number, gapMs: number, series = 0, overrides: Partial<SendCommand> = {}): SendCommand[] =>
  Array.from({ length: n }, (_, i) => aSend({ recipient: `+1415777${series}${String(i).padStart(3, '0')}`, text: `Your order ${series * 1_000 + i} has shipped.`, occurredAt: from + i * gapMs, ...overrides }));
