import { isMessagePurpose, MESSAGE_PURPOSES, normalizePhone } from '@gw/contract';
import type { Pool } from '@gw/db';
import { PLANS, type LimitsOverridden, type PolicyModule } from '@gw/policy';
import { CliError, requireCustomer } from '../accounts/customers.ts';
import type { FactLog } from './fact-log.ts';

const DAY = 86_400_000;

export function operator(by: string | undefined): string {
  return by ?? process.env.GATEWAY_OPERATOR ?? process.env.USER ?? 'operator';
}

export async function setPlan(pool: Pool, facts: FactLog, input: { customerId: string; plan: string; days?: number; by?: string; reason?: string; now?: number }) {
  await requireCustomer(pool, input.customerId);
  const plan = PLANS[input.plan];
  if (input.plan !== 'none' && !plan) throw new CliError(`Unknown plan ${input.plan}. Plans: ${Object.keys(PLANS).join(', ')}, or none.`);
  const now = input.now ?? Date.now();
  const validUntil = plan ? now + (input.days ?? plan.periodDays) * DAY : null;
  const result = await facts.append({
    type: 'PlanChanged',
    customerId: input.customerId,
    at: now,
    planId: plan ? plan.id : null,
    validUntil,
    by: operator(input.by),
    reason: input.reason ?? 'plan change',
  });
  return { customer_id: input.customerId, plan: plan?.id ?? null, valid_until: validUntil ? new Date(validUntil).toISOString() : null, ...result };
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
export async function setLimits(pool: Pool, facts: FactLog, input: LimitsInput) {
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

export async function toggleModules(pool: Pool, facts: FactLog, input: { customerId: string; enable: PolicyModule[]; disable: PolicyModule[]; by?: string }) {
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

export async function suppress(pool: Pool, facts: FactLog, input: { customerId: string; phone: string; reason: string; by?: string }) {
  await requireCustomer(pool, input.customerId);
  const recipient = e164(input.phone);
  const result = await facts.append({ type: 'RecipientSuppressed', customerId: input.customerId, at: Date.now(), recipient, source: 'manual', reason: input.reason, by: operator(input.by) });
  return { customer_id: input.customerId, recipient, source: 'manual', ...result };
}

export async function unsuppress(pool: Pool, facts: FactLog, input: { customerId: string; phone: string; by?: string }) {
  await requireCustomer(pool, input.customerId);
  const recipient = e164(input.phone);
  const result = await facts.append({ type: 'RecipientUnsuppressed', customerId: input.customerId, at: Date.now(), recipient, source: 'manual', by: operator(input.by) });
  return { customer_id: input.customerId, recipient, source: 'manual', ...result };
}

export async function listSuppressions(pool: Pool, customerId: string) {
  await requireCustomer(pool, customerId);
  const result = await pool.query<{ recipient: string; source: string; reason: string; created_by: string; created_at: Date }>(
    'SELECT recipient, source, reason, created_by, created_at FROM suppressions WHERE customer_id = $1 ORDER BY created_at',
    [customerId],
  );
  return result.rows.map((r) => ({ recipient: r.recipient, source: r.source, reason: r.reason, by: r.created_by, at: r.created_at.toISOString() }));
}

async function instanceOwner(pool: Pool, instanceId: string): Promise<string> {
  const result = await pool.query<{ customer_id: string }>('SELECT customer_id FROM instances WHERE id = $1', [instanceId]);
  const owner = result.rows[0]?.customer_id;
  if (!owner) throw new CliError(`No instance ${instanceId}.`);
  return owner;
}

export async function pauseInstance(pool: Pool, facts: FactLog, input: { instanceId: string; reason: string; by?: string }) {
  const customerId = await instanceOwner(pool, input.instanceId);
  const result = await facts.append({ type: 'InstancePausedForReview', customerId, at: Date.now(), instanceId: input.instanceId, reason: input.reason, by: operator(input.by) });
  return { instance_id: input.instanceId, customer_id: customerId, paused: true, ...result };
}

export async function resumeInstance(pool: Pool, facts: FactLog, input: { instanceId: string; reason: string; by?: string }) {
  const customerId = await instanceOwner(pool, input.instanceId);
  const result = await facts.append({ type: 'InstanceResumed', customerId, at: Date.now(), instanceId: input.instanceId, reason: input.reason, by: operator(input.by) });
  return { instance_id: input.instanceId, customer_id: customerId, paused: false, ...result };
}

/** Narrows the purposes a customer (or one of its instances) may send with; an empty list allows none. */
export async function allowPurposes(pool: Pool, facts: FactLog, input: { customerId: string; instanceId?: string; purposes: string[]; by?: string }) {
  await requireCustomer(pool, input.customerId);
  for (const purpose of input.purposes) if (!isMessagePurpose(purpose)) throw new CliError(`Unknown purpose ${purpose}. Purposes: ${MESSAGE_PURPOSES.join(', ')}.`);
  const result = await facts.append({ type: 'AllowedPurposesChanged', customerId: input.customerId, at: Date.now(), instanceId: input.instanceId ?? null, purposes: input.purposes });
  return { customer_id: input.customerId, instance_id: input.instanceId ?? null, purposes: input.purposes, ...result };
}
