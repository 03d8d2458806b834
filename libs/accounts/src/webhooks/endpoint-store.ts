import { sql, z, type Queryable } from '@gw/db';
import { WebhookError } from './refusals.ts';

export const EndpointStatus = z.enum(['active', 'paused', 'disabled']);
export type EndpointStatus = z.infer<typeof EndpointStatus>;

/**
 * Whose instances an operation may touch. Without a customer id (the operator), any instance;
 * with one (the dashboard), only that customer's live instances: another customer's, or a
 * deleted one, is refused exactly as an instance that does not exist.
 */
export interface CustomerScope {
  customerId?: string;
}

/** A webhook_endpoints row as the operations use it (the sealed secret stays in the database). */
export const EndpointRow = z.object({
  instance_id: z.string(),
  customer_id: z.string(),
  destination_url: z.string(),
  events: z.array(z.string()),
  status: EndpointStatus,
  disabled_reason: z.string().nullable(),
  disabled_at: z.date().nullable(),
  failing_since: z.date().nullable(),
  consecutive_failures: z.number(),
  last_success_at: z.date().nullable(),
  secret_rotated_at: z.date(),
});
export type EndpointRow = z.infer<typeof EndpointRow>;

const InstanceRow = z.object({ id: z.string(), customer_id: z.string() });

const ENDPOINT_COLUMNS = sql.fragment`instance_id, customer_id, destination_url, events, status, disabled_reason, disabled_at,
  failing_since, consecutive_failures, last_success_at, secret_rotated_at`;

/**
 * SET clause that makes an endpoint active with a fresh failure count: the disable rule ("every
 * attempt failed for 5 days") counts from the next failure, not from before someone stepped in.
 */
export const REACTIVATE = sql.fragment`status = 'active', failing_since = NULL, consecutive_failures = 0, disabled_reason = NULL, disabled_at = NULL`;

export const iso = (time: Date | null): string | null => (time ? time.toISOString() : null);

export const isScoped = (scope: CustomerScope): scope is { customerId: string } => scope.customerId !== undefined;

/** The instance (and its customer); refused as unknown when it is not in the scope. */
export async function requireInstance(db: Queryable, instanceId: string, scope: CustomerScope = {}): Promise<{ id: string; customer_id: string }> {
  const inScope = isScoped(scope) ? sql.fragment`customer_id = ${scope.customerId} AND deleted_at IS NULL` : sql.fragment`TRUE`;
  const found = await db.maybeOne(sql.type(InstanceRow)`SELECT id, customer_id FROM instances WHERE id = ${instanceId} AND ${inScope}`);
  if (!found) throw new WebhookError('not_found', 'no_instance', `No instance ${instanceId}.`, { instanceId });
  return found;
}

/** The instance's endpoint; a clear refusal for an unknown instance and for one without a webhook. */
export async function requireEndpoint(db: Queryable, instanceId: string, scope: CustomerScope = {}, lock = false): Promise<EndpointRow> {
  if (isScoped(scope)) await requireInstance(db, instanceId, scope);
  const found = await db.maybeOne(sql.type(EndpointRow)`
    SELECT ${ENDPOINT_COLUMNS} FROM webhook_endpoints WHERE instance_id = ${instanceId}${lock ? sql.fragment` FOR UPDATE` : sql.fragment``}`);
  if (found) return found;
  await requireInstance(db, instanceId);
  throw new WebhookError('not_found', 'no_webhook', `Instance ${instanceId} has no webhook.`, { instanceId });
}

/** The refusal for work that would queue deliveries to a disabled endpoint (it gets none). */
export function refuseDisabled(endpoint: EndpointRow, doing: string): void {
  if (endpoint.status !== 'disabled') return;
  const why = endpoint.disabled_reason ? ` (${endpoint.disabled_reason})` : '';
  throw new WebhookError(
    'conflict',
    'disabled',
    `The webhook of instance ${endpoint.instance_id} is disabled${why}, so ${doing} would deliver nothing; resume it first.`,
    { instanceId: endpoint.instance_id, disabledReason: endpoint.disabled_reason, doing },
  );
}
