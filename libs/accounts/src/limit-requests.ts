// Requests for higher limits (spec 8: "Higher limits are granted only after manual review"): a
// customer asks on the dashboard's usage page, an operator grants or declines with gatewayctl.
// The table (`limit_requests`) only records the asking and the decision; what changes the
// limits is the LimitsOverridden fact the operator appends, as `gatewayctl customer set-limits`
// does. Shared by the API and gatewayctl; a refusal is an AccountError whose message may be
// shown to whoever asked.
import { sql, UniqueIntegrityConstraintViolationError, z, type Pool, type Queryable } from '@gw/db';
import { textProblem } from '@gw/contract';
import { newId } from '@gw/security';
import { requireCustomer } from './customers.ts';
import { AccountError } from './errors.ts';

export const LIMIT_REQUEST_STATUSES = ['pending', 'granted', 'declined'] as const;
export type LimitRequestStatus = (typeof LIMIT_REQUEST_STATUSES)[number];

/** The longest reason a customer, or note an operator, may write. */
export const LIMIT_REQUEST_TEXT_MAX = 2000;
/** The largest limit a request may name (the column is a Postgres integer). */
export const LIMIT_REQUEST_MAX = 2_000_000_000;

const LimitRequestRow = z.object({
  id: z.string(),
  customer_id: z.string(),
  requested_daily: z.number().nullable(),
  requested_monthly: z.number().nullable(),
  reason: z.string(),
  requested_by: z.string(),
  requested_at: z.date(),
  status: z.enum(LIMIT_REQUEST_STATUSES),
  decided_by: z.string().nullable(),
  decided_at: z.date().nullable(),
  decision_note: z.string().nullable(),
});
export type LimitRequest = z.infer<typeof LimitRequestRow>;

const COLUMNS = sql.fragment`id, customer_id, requested_daily, requested_monthly, reason, requested_by, requested_at, status, decided_by, decided_at, decision_note`;

export interface LimitRequestInput {
  customerId: string;
  daily: number | null;
  monthly: number | null;
  reason: string;
  /** The member's email. */
  requestedBy: string;
}

const validLimit = (value: number | null) => value === null || (Number.isInteger(value) && value > 0 && value <= LIMIT_REQUEST_MAX);

/**
 * Records a request for higher limits, pending. At most one request of a customer is pending at a
 * time (a unique index): a second one is refused as a conflict. Whether the numbers are above
 * the customer's current limits is the caller's check (it knows the folded policy state).
 */
export async function requestLimits(pool: Queryable, input: LimitRequestInput): Promise<LimitRequest> {
  if (input.daily === null && input.monthly === null) throw new AccountError('invalid', 'Ask for a higher daily limit, a higher monthly limit, or both.');
  if (!validLimit(input.daily) || !validLimit(input.monthly)) throw new AccountError('invalid', `A limit is a whole number from 1 to ${LIMIT_REQUEST_MAX.toLocaleString('en-US')}.`);
  const reason = input.reason.trim();
  if (reason === '') throw new AccountError('invalid', 'Say what you send and why you need higher limits.');
  const problem = textProblem(reason, LIMIT_REQUEST_TEXT_MAX);
  if (problem) throw new AccountError('invalid', `The reason ${problem}.`);
  await requireCustomer(pool, input.customerId);
  try {
    return await pool.one(sql.type(LimitRequestRow)`
      INSERT INTO limit_requests (id, customer_id, requested_daily, requested_monthly, reason, requested_by)
      VALUES (${newId('lrq')}, ${input.customerId}, ${input.daily}, ${input.monthly}, ${reason}, ${input.requestedBy})
      RETURNING ${COLUMNS}`);
  } catch (error) {
    if (error instanceof UniqueIntegrityConstraintViolationError) {
      throw new AccountError('conflict', 'A request for higher limits is already waiting for review. You can ask again once it has been decided.');
    }
    throw error;
  }
}

/** Requests, newest first: one customer's (the dashboard), or every customer's (gatewayctl), optionally of one status. */
export async function listLimitRequests(pool: Queryable, filter: { customerId?: string; status?: LimitRequestStatus } = {}): Promise<readonly LimitRequest[]> {
  const where = [
    ...(filter.customerId !== undefined ? [sql.fragment`customer_id = ${filter.customerId}`] : []),
    ...(filter.status !== undefined ? [sql.fragment`status = ${filter.status}`] : []),
  ];
  return pool.any(sql.type(LimitRequestRow)`
    SELECT ${COLUMNS} FROM limit_requests
     ${where.length > 0 ? sql.fragment`WHERE ${sql.join(where, sql.fragment` AND `)}` : sql.fragment``}
     ORDER BY requested_at DESC, id DESC`);
}

/** One request by id; with `customerId`, only that customer's (another's is refused as unknown). */
export async function getLimitRequest(pool: Queryable, id: string, scope: { customerId?: string } = {}): Promise<LimitRequest> {
  const ownedBy = scope.customerId === undefined ? sql.fragment`TRUE` : sql.fragment`customer_id = ${scope.customerId}`;
  const found = await pool.maybeOne(sql.type(LimitRequestRow)`SELECT ${COLUMNS} FROM limit_requests WHERE id = ${id} AND ${ownedBy}`);
  if (!found) throw new AccountError('not_found', `No limit request ${id}.`);
  return found;
}

export interface LimitDecision {
  status: 'granted' | 'declined';
  /** The operator. */
  by: string;
  note: string;
}

/**
 * Decides a pending request. `beforeDecided` runs first, with the request locked (FOR UPDATE, so
 * two operators deciding the same request at once go one after the other) and the transaction to
 * read with (the pool cannot be used inside it): for a grant, it
 * appends the LimitsOverridden fact, and the row is marked only once that append is
 * acknowledged. If it throws, or the process dies before the update commits, the request stays
 * pending and can be decided again. A request already decided is refused as a conflict.
 */
export async function decideLimitRequest(
  pool: Pool,
  id: string,
  decision: LimitDecision,
  beforeDecided: (request: LimitRequest, tx: Queryable) => Promise<void> = async () => undefined,
): Promise<LimitRequest> {
  const note = decision.note.trim();
  if (note === '') throw new AccountError('invalid', 'A decision needs a reason (the customer sees it).');
  const problem = textProblem(note, LIMIT_REQUEST_TEXT_MAX);
  if (problem) throw new AccountError('invalid', `The reason ${problem}.`);
  return pool.transaction(async (tx) => {
    const request = await tx.maybeOne(sql.type(LimitRequestRow)`SELECT ${COLUMNS} FROM limit_requests WHERE id = ${id} FOR UPDATE`);
    if (!request) throw new AccountError('not_found', `No limit request ${id}.`);
    if (request.status !== 'pending') {
      throw new AccountError('conflict', `Limit request ${id} was already ${request.status} by ${request.decided_by ?? 'someone'} at ${request.decided_at?.toISOString() ?? 'an unknown time'}.`);
    }
    await beforeDecided(request, tx);
    return tx.one(sql.type(LimitRequestRow)`
      UPDATE limit_requests SET status = ${decision.status}, decided_by = ${decision.by}, decided_at = now(), decision_note = ${note}
       WHERE id = ${id} RETURNING ${COLUMNS}`);
  });
}
