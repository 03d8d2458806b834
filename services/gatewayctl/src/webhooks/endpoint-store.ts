import type { Pool, PoolClient } from '@gw/db';
import { CliError } from '../accounts/customers.ts';

export type EndpointStatus = 'active' | 'paused' | 'disabled';

/** A webhook_endpoints row as the commands use it (the sealed secret stays in the database). */
export interface EndpointRow {
  instance_id: string;
  customer_id: string;
  destination_url: string;
  events: string[];
  status: EndpointStatus;
  disabled_reason: string | null;
  disabled_at: Date | null;
  failing_since: Date | null;
  consecutive_failures: number;
  last_success_at: Date | null;
  secret_rotated_at: Date;
}

const ENDPOINT_COLUMNS = `instance_id, customer_id, destination_url, events, status, disabled_reason, disabled_at,
  failing_since, consecutive_failures, last_success_at, secret_rotated_at`;

/**
 * SET clause that makes an endpoint active with a fresh failure count: the disable rule ("every
 * attempt failed for 5 days") counts from the next failure, not from before the operator stepped in.
 */
export const REACTIVATE = `status = 'active', failing_since = NULL, consecutive_failures = 0, disabled_reason = NULL, disabled_at = NULL`;

export const iso = (time: Date | null): string | null => (time ? time.toISOString() : null);

/** The instance's endpoint; a clear error for an unknown instance and for one without a webhook. */
export async function requireEndpoint(db: Pool | PoolClient, instanceId: string, lock = false): Promise<EndpointRow> {
  const found = await db.query<EndpointRow>(`SELECT ${ENDPOINT_COLUMNS} FROM webhook_endpoints WHERE instance_id = $1${lock ? ' FOR UPDATE' : ''}`, [instanceId]);
  if (found.rows[0]) return found.rows[0];
  await requireInstance(db, instanceId);
  throw new CliError(`Instance ${instanceId} has no webhook; configure one with: gatewayctl webhook set --instance ${instanceId} --url URL --events recommended`);
}

export async function requireInstance(db: Pool | PoolClient, instanceId: string): Promise<{ id: string; customer_id: string }> {
  const found = await db.query<{ id: string; customer_id: string }>('SELECT id, customer_id FROM instances WHERE id = $1', [instanceId]);
  if (!found.rows[0]) throw new CliError(`No instance ${instanceId}.`);
  return found.rows[0];
}

/** The refusal for work that would queue deliveries to a disabled endpoint (it gets none). */
export function refuseDisabled(endpoint: EndpointRow, doing: string): void {
  if (endpoint.status !== 'disabled') return;
  const why = endpoint.disabled_reason ? ` (${endpoint.disabled_reason})` : '';
  throw new CliError(
    `The webhook of instance ${endpoint.instance_id} is disabled${why}, so ${doing} would deliver nothing; ` +
      `resume it first: gatewayctl webhook resume --instance ${endpoint.instance_id}`,
  );
}
