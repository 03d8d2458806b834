import type { PolicyEvent, SuppressionSource } from '../events.ts';
import type { SendCommand } from '../types.ts';

export const CUSTOMER = 'cus_1';
export const INSTANCE = 'ins_1';
export const RECIPIENT = '+14155552671';
/** The linked id WhatsApp shows instead of RECIPIENT's number. */
export const LID = '123456789012345@lid';
/** 2026-11-22 12:00 UTC: the tests' "now". */
export const T0 = Date.UTC(2026, 10, 22, 12);
export const MINUTE = 60_000;
export const HOUR = 3_600_000;
export const DAY = 86_400_000;

let sequence = 0;

/** A harmless transactional send; override what the test is about. */
export function aSend(overrides: Partial<SendCommand> = {}): SendCommand {
  sequence += 1;
  return {
    commandId: `cmd_${sequence}`,
    customerId: CUSTOMER,
    instanceId: INSTANCE,
    recipient: RECIPIENT,
    purpose: 'transactional',
    text: 'Your order 1234 has shipped.',
    occurredAt: T0,
    source: 'api',
    ...overrides,
  };
}

/** n sends to distinct recipients with distinct bodies, `gapMs` apart (so only quotas can bite). */
export function distinctSends(n: number, from: number, gapMs: number, overrides: Partial<SendCommand> = {}): SendCommand[] {
  return Array.from({ length: n }, (_, i) =>
    aSend({ recipient: `+1415555${String(i % 10_000).padStart(4, '0')}`, text: `Your order ${10_000 + i} has shipped.`, occurredAt: from + i * gapMs, ...overrides }),
  );
}

export const registered = (at = T0 - DAY): PolicyEvent => ({ type: 'CustomerRegistered', customerId: CUSTOMER, at });

export const planChanged = (planId: string | null, validUntil: number | null = T0 + 30 * DAY, at = T0 - DAY): PolicyEvent => ({
  type: 'PlanChanged', customerId: CUSTOMER, at, planId, validUntil, by: 'billing', reason: 'paid',
});

/** A registered customer on a paid plan: the baseline every send test starts from. */
export const activeCustomer = (planId = 'starter'): PolicyEvent[] => [registered(), planChanged(planId)];

export const moduleToggled = (module: 'api' | 'pbx', enabled: boolean, at = T0 - HOUR): PolicyEvent => ({
  type: 'ModuleToggled', customerId: CUSTOMER, at, module, enabled, by: 'ops',
});

export const suppressed = (recipient = RECIPIENT, source: SuppressionSource = 'opt_out', at = T0 - HOUR, instanceId?: string): PolicyEvent => ({
  type: 'RecipientSuppressed', customerId: CUSTOMER, at, recipient, source, reason: source === 'opt_out' ? 'STOP' : 'asked by phone', by: source === 'opt_out' ? 'recipient' : 'ops', ...(instanceId ? { instanceId } : {}),
});

export const unsuppressed = (recipient = RECIPIENT, source: SuppressionSource = 'opt_out', at = T0 - MINUTE): PolicyEvent => ({
  type: 'RecipientUnsuppressed', customerId: CUSTOMER, at, recipient, source, by: 'ops',
});

/** The manager reported both the linked id and the number of one sender on `instanceId`. */
export const identityLinked = (lid = LID, phone = RECIPIENT, instanceId = INSTANCE, at = T0 - 30 * MINUTE): PolicyEvent => ({
  type: 'RecipientIdentityLinked', customerId: CUSTOMER, at, instanceId, lid, phone,
});

export const paused = (instanceId = INSTANCE, at = T0 - HOUR): PolicyEvent => ({
  type: 'InstancePausedForReview', customerId: CUSTOMER, at, instanceId, reason: 'complaints', by: 'alice',
});

export const resumed = (instanceId = INSTANCE, at = T0 - MINUTE): PolicyEvent => ({
  type: 'InstanceResumed', customerId: CUSTOMER, at, instanceId, by: 'alice', reason: 'reviewed',
});

export const delivery = (delivered: boolean, at = T0, instanceId = INSTANCE, recipient = RECIPIENT): PolicyEvent => ({
  type: 'DeliveryOutcomeRecorded', customerId: CUSTOMER, at, instanceId, recipient, delivered,
});
