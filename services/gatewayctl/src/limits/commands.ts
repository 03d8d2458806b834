// `gatewayctl limits requests|grant|decline`: the customers' requests for higher limits, asked for
// on the dashboard's usage page (@gw/accounts' limit requests, shared with the API). A grant is
// the override that already exists, LimitsOverridden (setLimits, as `customer set-limits`
// appends it), with the request's values unless the operator gives others; only once the broker
// has acknowledged it is the request marked granted.
import type { Command } from 'commander';
import { decideLimitRequest, getLimitRequest, LIMIT_REQUEST_MAX, LIMIT_REQUEST_STATUSES, listLimitRequests, type LimitRequest, type LimitRequestStatus } from '@gw/accounts';
import type { Pool, Queryable } from '@gw/db';
import { createPolicy, effectivePlan, initialPolicyState, type CustomerPolicyState, type PolicyConfig } from '@gw/policy';
import { readPolicyState } from '@gw/policy-log';
import { CliError, type ActionWrapper } from '../action.ts';
import type { Audit } from '../audit.ts';
import { operator, setLimits } from '../policy/commands.ts';
import type { FactLog } from '../policy/fact-log.ts';

export interface LimitCommandDeps {
  action: ActionWrapper;
  /** The pool, created (and connected) on first use. */
  db: () => Promise<Pool>;
  facts: FactLog;
  audit: Audit;
}

/** The customer's folded policy state as the engine last wrote it (the override in force, the plan). */
async function policyState(pool: Queryable, customerId: string): Promise<CustomerPolicyState> {
  return (await readPolicyState(pool, customerId)) ?? initialPolicyState(customerId);
}

/** A request as the operator reads it, with the customer's limits now (the policy engine's config). */
function printable(request: LimitRequest, state: CustomerPolicyState, config: PolicyConfig) {
  const plan = effectivePlan(state, config);
  return {
    request_id: request.id,
    customer_id: request.customer_id,
    status: request.status,
    requested_daily: request.requested_daily,
    requested_monthly: request.requested_monthly,
    current_daily: plan?.dailyLimit ?? null,
    current_monthly: plan?.monthlyLimit ?? null,
    plan: state.plan.planId,
    reason: request.reason,
    requested_by: request.requested_by,
    requested_at: request.requested_at.toISOString(),
    decided_by: request.decided_by,
    decided_at: request.decided_at?.toISOString() ?? null,
    decision_note: request.decision_note,
  };
}

function status(value: string | undefined): LimitRequestStatus | undefined {
  if (value === undefined) return undefined;
  if (!(LIMIT_REQUEST_STATUSES as readonly string[]).includes(value)) throw new CliError(`Unknown status ${value}: use ${LIMIT_REQUEST_STATUSES.join(', ')}.`);
  return value as LimitRequestStatus;
}

function limit(value: string | undefined, flag: string): number | undefined {
  if (value === undefined) return undefined;
  const n = /^\d{1,10}$/.test(value) ? Number(value) : Number.NaN;
  if (!Number.isInteger(n) || n < 1 || n > LIMIT_REQUEST_MAX) throw new CliError(`${flag} ${value} is not a whole number from 1 to ${LIMIT_REQUEST_MAX}.`);
  return n;
}

export async function listRequests(pool: Pool, filter: { status?: string; customer?: string }) {
  const requests = await listLimitRequests(pool, { status: status(filter.status), customerId: filter.customer });
  const config = createPolicy().config;
  const states = new Map<string, CustomerPolicyState>();
  const rows = [];
  for (const request of requests) {
    if (!states.has(request.customer_id)) states.set(request.customer_id, await policyState(pool, request.customer_id));
    rows.push(printable(request, states.get(request.customer_id)!, config));
  }
  return rows;
}

export interface GrantInput {
  requestId: string;
  /** The limits to grant; by default the request's own. */
  daily?: number;
  monthly?: number;
  reason: string;
  by?: string;
}

/**
 * Grants a pending request: appends LimitsOverridden with the request's values (or the
 * operator's), then marks the request granted. An override replaces the one before it as a
 * whole, so what the customer's override in force sets and this grant does not (the other
 * quota, velocity, bulk) is carried over into the new one: a grant only ever raises what was
 * asked for.
 *
 * The fact is appended before the row is updated (decideLimitRequest runs the append with the
 * row locked, then updates it). A crash or a failure between the two leaves the request pending
 * with the override already in force; the operator grants it again, which appends the same
 * override a second time. That is harmless: LimitsOverridden replaces the override as a whole,
 * so the second one leaves exactly the same limits. The other order could mark a request granted
 * whose override never reached the engine.
 */
export async function grantRequest(pool: Pool, facts: FactLog, input: GrantInput) {
  const by = operator(input.by);
  let granted: Awaited<ReturnType<typeof setLimits>> | undefined;
  const request = await decideLimitRequest(pool, input.requestId, { status: 'granted', by, note: input.reason }, async (pending, tx) => {
    const daily = input.daily ?? pending.requested_daily ?? undefined;
    const monthly = input.monthly ?? pending.requested_monthly ?? undefined;
    const current = (await policyState(tx, pending.customer_id)).override;
    granted = await setLimits(tx, facts, {
      customerId: pending.customer_id,
      daily: daily ?? current?.daily,
      monthly: monthly ?? current?.monthly,
      burst: current?.velocity?.burst,
      refillPerMinute: current?.velocity?.refillPerMinute,
      recipientIntervalMs: current?.velocity?.recipientMinIntervalMs,
      bulkRecipients: current?.bulk?.maxDistinctRecipients,
      reason: input.reason,
      by,
    });
  });
  return {
    request_id: request.id,
    customer_id: request.customer_id,
    status: request.status,
    daily: granted!.override.daily ?? null,
    monthly: granted!.override.monthly ?? null,
    decided_by: request.decided_by,
    decided_at: request.decided_at?.toISOString() ?? null,
    override: granted!.override,
    correlation_id: granted!.correlation_id,
    appended: granted!.appended,
  };
}

/** Declines a pending request; the reason is shown to the customer. Nothing changes their limits. */
export async function declineRequest(pool: Pool, input: { requestId: string; reason: string; by?: string }) {
  const request = await decideLimitRequest(pool, input.requestId, { status: 'declined', by: operator(input.by), note: input.reason });
  return { request_id: request.id, customer_id: request.customer_id, status: request.status, decided_by: request.decided_by, decided_at: request.decided_at?.toISOString() ?? null, decision_note: request.decision_note };
}

/** Adds `limits requests|show|grant|decline` to the operator CLI. */
export function registerLimitCommands(program: Command, { action, db, facts, audit }: LimitCommandDeps): void {
  const limits = program.command('limits').description("customers' requests for higher limits (asked for on the dashboard's usage page): list, grant or decline them");

  limits
    .command('requests')
    .description('requests for higher limits, newest first')
    .option('--status <status>', 'only pending, granted or declined ones')
    .option('--customer <id>', "only this customer's")
    .action(action(async (opts: { status?: string; customer?: string }) => listRequests(await db(), opts)));

  limits
    .command('show')
    .argument('<request-id>', 'the request id (lrq_…)')
    .action(action(async (requestId: string) => {
      const pool = await db();
      const request = await getLimitRequest(pool, requestId);
      return printable(request, await policyState(pool, request.customer_id), createPolicy().config);
    }));

  limits
    .command('grant')
    .description("grant a pending request: appends the limit override (LimitsOverridden) with the request's values, then marks it granted")
    .argument('<request-id>', 'the request id (lrq_…)')
    .option('--daily <n>', 'grant this daily limit instead of the one asked for')
    .option('--monthly <n>', 'grant this monthly limit instead of the one asked for')
    .requiredOption('--reason <text>', 'the outcome of the review (the customer sees it)')
    .option('--by <operator>', 'who (default: $GATEWAY_OPERATOR or $USER)')
    .action(action(async (requestId: string, opts: { daily?: string; monthly?: string; reason: string; by?: string }) => {
      const granted = await grantRequest(await db(), facts, { requestId, daily: limit(opts.daily, '--daily'), monthly: limit(opts.monthly, '--monthly'), reason: opts.reason, by: opts.by });
      await audit({ customerId: granted.customer_id }, { action: 'limits.granted', subjectId: requestId, details: { daily: granted.daily, monthly: granted.monthly } });
      return granted;
    }));

  limits
    .command('decline')
    .description('decline a pending request (the reason is shown to the customer)')
    .argument('<request-id>', 'the request id (lrq_…)')
    .requiredOption('--reason <text>', 'why (the customer sees it)')
    .option('--by <operator>', 'who (default: $GATEWAY_OPERATOR or $USER)')
    .action(action(async (requestId: string, opts: { reason: string; by?: string }) => {
      const declined = await declineRequest(await db(), { requestId, reason: opts.reason, by: opts.by });
      await audit({ customerId: declined.customer_id }, { action: 'limits.declined', subjectId: requestId });
      return declined;
    }));
}
