import { sql, type Queryable } from '@gw/db';
import { PLANS, type PlanChanged, type PolicyEvent } from '@gw/policy';
import { newId } from '@gw/security';
import { AccountError } from './errors.ts';

/**
 * Appends a policy fact to the customer's stream, resolving once the broker has acknowledged it
 * (gatewayctl's FactLog is one).
 */
export interface FactAppender {
  append(fact: PolicyEvent): Promise<unknown>;
}

/**
 * The CustomerRegistered fact the policy engine starts the customer from, then the account
 * record. Kafka and Postgres share no transaction, so the order is what makes this safe: the row
 * (without which no key or instance can be made, so nothing can be sent) exists only once the
 * fact is acknowledged. A failure between the two leaves a fact for an id nothing will ever use
 * (random, never reused), and the caller runs the operation again.
 */
export async function createCustomer(pool: Queryable, facts: FactAppender, name: string) {
  const id = newId('cus');
  await facts.append({ type: 'CustomerRegistered', customerId: id, at: Date.now() });
  await pool.query(sql.typeAlias('void')`INSERT INTO customers (id, name) VALUES (${id}, ${name})`);
  return { customer_id: id, name };
}

const DAY = 86_400_000;

/**
 * The PlanChanged fact that gives a customer a plan for its period (or `days`) from `now`;
 * `none` ends its plan. An unknown plan is refused.
 */
export function planChange(customerId: string, plan: string, input: { by: string; reason: string; days?: number; now?: number }): PlanChanged {
  const known = PLANS[plan];
  if (plan !== 'none' && !known) throw new AccountError('invalid', `Unknown plan ${plan}. Plans: ${Object.keys(PLANS).join(', ')}, or none.`);
  const at = input.now ?? Date.now();
  return { type: 'PlanChanged', customerId, at, planId: known ? known.id : null, validUntil: known ? at + (input.days ?? known.periodDays) * DAY : null, by: input.by, reason: input.reason };
}

export async function requireCustomer(pool: Queryable, customerId: string): Promise<void> {
  const found = await pool.exists(sql.typeAlias('void')`SELECT FROM customers WHERE id = ${customerId}`);
  if (!found) throw new AccountError('not_found', `No customer ${customerId}.`);
}
