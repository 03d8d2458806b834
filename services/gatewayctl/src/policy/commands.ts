import { isMessagePurpose, MESSAGE_PURPOSES, normalizePhone } from '@gw/contract';
import { sql, z, type Queryable } from '@gw/db';
import type { LimitsOverridden, PolicyModule } from '@gw/policy';
import { InstanceOwner, planChange, requireCustomer } from '@gw/accounts';
import { loadConfig } from '@gw/config';
import { CliError } from '../action.ts';
import type { FactLog } from './fact-log.ts';

const SuppressionRow = z.object({ recipient: z.string(), source: z.string(), reason: z.string(), created_by: z.string(), created_at: z.date() });

/** Who made a change: --by, else GATEWAY_OPERATOR or USER (libs/config). */
export function operator(by: string | undefined): string {
  return by ?? loadConfig().gatewayctl.operator;
}

export async function setPlan(pool: Queryable, facts: FactLog, input: { customerId: string; plan: string; days?: number; by?: string; reason?: string; now?: number }) {
  await requireCustomer(pool, input.customerId);
  const fact = planChange(input.customerId, input.plan, { by: operator(input.by), reason: input.reason ?? 'plan change', days: input.days, now: input.now });
  const result = await facts.append(fact);
  return { customer_id: input.customerId, plan: fact.planId, valid_until: fact.validUntil ? new Date(fact.validUntil).toISOString() : null, ...result };
}

export interface LimitsInput {
  customerId: string;
  daily?: number;
  monthly?: number;
  burst?: number;
  refillPerMinute?: number;
  recipientIntervalMs?: number;
  bulkRecipients?: number;
  reason: string;
  by?: string;
}

/** Higher limits only by manual review: who granted them and why is part of the event. */
export async function setLimits(pool: Queryable, facts: FactLog, input: LimitsInput) {
  await requireCustomer(pool, input.customerId);
  if (!input.reason.trim()) throw new CliError('A limit override needs --reason (the outcome of the manual review).');
  const velocity: LimitsOverridden['velocity'] = {};
  if (input.burst !== undefined) velocity.burst = input.burst;
  if (input.refillPerMinute !== undefined) velocity.refillPerMinute = input.refillPerMinute;
  if (input.recipientIntervalMs !== undefined) velocity.recipientMinIntervalMs = input.recipientIntervalMs;
  const fact: LimitsOverridden = {
    type: 'LimitsOverridden',
    customerId: input.customerId,
    at: Date.now(),
    ...(input.daily !== undefined ? { daily: input.daily } : {}),
    ...(input.monthly !== undefined ? { monthly: input.monthly } : {}),
    ...(Object.keys(velocity).length > 0 ? { velocity } : {}),
    ...(input.bulkRecipients !== undefined ? { bulk: { maxDistinctRecipients: input.bulkRecipients } } : {}),
    grantedBy: operator(input.by),
    reason: input.reason,
  };
  return { customer_id: input.customerId, override: fact, ...(await facts.append(fact)) };
}

export async function toggleModules(pool: Queryable, facts: FactLog, input: { customerId: string; enable: PolicyModule[]; disable: PolicyModule[]; by?: string }) {
  await requireCustomer(pool, input.customerId);
  const all = [...input.enable.map((m) => [m, true] as const), ...input.disable.map((m) => [m, false] as const)];
  if (all.length === 0) throw new CliError('Say which modules: --enable api|pbx and/or --disable api|pbx.');
  for (const [module] of all) if (module !== 'api' && module !== 'pbx') throw new CliError(`Unknown module ${module}: use api or pbx.`);
  const at = Date.now();
  const result = await facts.append(...all.map(([module, enabled]) => ({ type: 'ModuleToggled' as const, customerId: input.customerId, at, module, enabled, by: operator(input.by) })));
  return { customer_id: input.customerId, enabled: input.enable, disabled: input.disable, ...result };
}

function e164(phone: string): string {
  const normalised = normalizePhone(phone);
  if (!normalised) throw new CliError(`${phone} is not a phone number in international format.`);
  return normalised;
}

export async function suppress(pool: Queryable, facts: FactLog, input: { customerId: string; phone: string; reason: string; by?: string }) {
  await requireCustomer(pool, input.customerId);
  const recipient = e164(input.phone);
  const result = await facts.append({ type: 'RecipientSuppressed', customerId: input.customerId, at: Date.now(), recipient, source: 'manual', reason: input.reason, by: operator(input.by) });
  return { customer_id: input.customerId, recipient, source: 'manual', ...result };
}

export async function unsuppress(pool: Queryable, facts: FactLog, input: { customerId: string; phone: string; by?: string }) {
  await requireCustomer(pool, input.customerId);
  const recipient = e164(input.phone);
  const result = await facts.append({ type: 'RecipientUnsuppressed', customerId: input.customerId, at: Date.now(), recipient, source: 'manual', by: operator(input.by) });
  return { customer_id: input.customerId, recipient, source: 'manual', ...result };
}

export async function listSuppressions(pool: Queryable, customerId: string) {
  await requireCustomer(pool, customerId);
  const rows = await pool.any(sql.type(SuppressionRow)`
    SELECT recipient, source, reason, created_by, created_at FROM suppressions WHERE customer_id = ${customerId} ORDER BY created_at`);
  return rows.map((r) => ({ recipient: r.recipient, source: r.source, reason: r.reason, by: r.created_by, at: r.created_at.toISOString() }));
}

async function instanceOwner(pool: Queryable, instanceId: string): Promise<string> {
  const owner = await pool.maybeOneFirst(sql.type(InstanceOwner)`SELECT customer_id FROM instances WHERE id = ${instanceId}`);
  if (!owner) throw new CliError(`No instance ${instanceId}.`);
  return owner;
}

export async function pauseInstance(pool: Queryable, facts: FactLog, input: { instanceId: string; reason: string; by?: string }) {
  const customerId = await instanceOwner(pool, input.instanceId);
  const result = await facts.append({ type: 'InstancePausedForReview', customerId, at: Date.now(), instanceId: input.instanceId, reason: input.reason, by: operator(input.by) });
  return { instance_id: input.instanceId, customer_id: customerId, paused: true, ...result };
}

export async function resumeInstance(pool: Queryable, facts: FactLog, input: { instanceId: string; reason: string; by?: string }) {
  const customerId = await instanceOwner(pool, input.instanceId);
  const result = await facts.append({ type: 'InstanceResumed', customerId, at: Date.now(), instanceId: input.instanceId, reason: input.reason, by: operator(input.by) });
  return { instance_id: input.instanceId, customer_id: customerId, paused: false, ...result };
}

/**
 * Lifts the number guard's restriction on an instance after a review (issue 27): the
 * RestrictionLifted fact, appended like InstanceResumed, so the engine lets it message new
 * contacts again from the fact on (a replay decides the same).
 */
export async function liftRestriction(pool: Queryable, facts: FactLog, input: { instanceId: string; reason: string; by?: string }) {
  if (!input.reason.trim()) throw new CliError('Lifting a restriction needs --reason (the outcome of the review).');
  const customerId = await instanceOwner(pool, input.instanceId);
  const result = await facts.append({ type: 'RestrictionLifted', customerId, at: Date.now(), instanceId: input.instanceId, by: operator(input.by), reason: input.reason });
  return { instance_id: input.instanceId, customer_id: customerId, restricted: false, ...result };
}

/** Narrows the purposes a customer (or one of its instances) may send with; an empty list allows none. */
export async function allowPurposes(pool: Queryable, facts: FactLog, input: { customerId: string; instanceId?: string; purposes: string[]; by?: string }) {
  await requireCustomer(pool, input.customerId);
  for (const purpose of input.purposes) if (!isMessagePurpose(purpose)) throw new CliError(`Unknown purpose ${purpose}. Purposes: ${MESSAGE_PURPOSES.join(', ')}.`);
  const result = await facts.append({ type: 'AllowedPurposesChanged', customerId: input.customerId, at: Date.now(), instanceId: input.instanceId ?? null, purposes: input.purposes });
  return { customer_id: input.customerId, instance_id: input.instanceId ?? null, purposes: input.purposes, ...result };
}
