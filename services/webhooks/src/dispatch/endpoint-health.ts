import { z } from '@gw/db';
import { updateEndpointHealth, type EndpointHealth, type RetryPolicy } from '@gw/webhooks';
import type { AttemptRecord } from './attempt.ts';

/** An endpoint row's health columns, as read under lock. */
export const EndpointHealthRow = z.object({
  instance_id: z.string(),
  status: z.enum(['active', 'paused', 'disabled']),
  failing_since: z.date().nullable(),
  last_success_at: z.date().nullable(),
  consecutive_failures: z.number(),
  disabled_at: z.date().nullable(),
  disabled_reason: z.enum(['gone', 'failing_too_long']).nullable(),
});
export type EndpointHealthRow = z.infer<typeof EndpointHealthRow>;

const ms = (d: Date | null) => (d === null ? null : d.getTime());

export function toHealth(row: EndpointHealthRow): EndpointHealth {
  return {
    state: row.status === 'disabled' ? 'disabled' : 'active',
    failingSince: ms(row.failing_since),
    lastSuccessAt: ms(row.last_success_at),
    consecutiveFailures: row.consecutive_failures,
    disabledAt: ms(row.disabled_at),
    disabledReason: row.disabled_reason,
  };
}

/**
 * Folds a batch's attempts into one endpoint's health, in the order they were made. A paused
 * endpoint keeps its status unless the attempts disable it (410, or failing for too long).
 */
export function foldHealth(row: EndpointHealthRow, attempts: AttemptRecord[], policy: RetryPolicy): { health: EndpointHealth; status: EndpointHealthRow['status'] } {
  let health = toHealth(row);
  for (const a of [...attempts].sort((x, y) => x.attemptedAt - y.attemptedAt)) {
    health = updateEndpointHealth(health, a.classification, a.attemptedAt, policy);
  }
  const status = health.state === 'disabled' ? 'disabled' : row.status;
  return { health, status };
}
