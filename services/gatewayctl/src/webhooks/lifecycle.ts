import { withTransaction, type Pool } from '@gw/db';
import type { SecretBox } from '@gw/security';
import { generateSigningSecret } from '@gw/webhooks';
import { CliError } from '../accounts/customers.ts';
import { iso, REACTIVATE, requireEndpoint, type EndpointStatus } from './endpoint-store.ts';

/**
 * A new signing secret, returned this once; the worker signs with it from its next claim on.
 * The receiver should accept both secrets while it switches over (docs/webhooks.md).
 */
export async function rotateWebhookSecret(pool: Pool, box: SecretBox, instanceId: string) {
  const secret = generateSigningSecret();
  const rotated = await pool.query<{ secret_rotated_at: Date }>(
    'UPDATE webhook_endpoints SET signing_secret_enc = $2, secret_rotated_at = now(), updated_at = now() WHERE instance_id = $1 RETURNING secret_rotated_at',
    [instanceId, box.seal(secret)],
  );
  if (!rotated.rows[0]) await requireEndpoint(pool, instanceId); // throws the clear "no instance / no webhook" error
  return { instance_id: instanceId, signing_secret: secret, secret_rotated_at: iso(rotated.rows[0]!.secret_rotated_at) };
}

/**
 * Holds deliveries: new events are still queued for a paused endpoint and sent on resume.
 * A disabled endpoint is left as it is; resume is the way back from it.
 */
export async function pauseWebhook(pool: Pool, instanceId: string) {
  return withTransaction(pool, async (client) => {
    const endpoint = await requireEndpoint(client, instanceId, true);
    if (endpoint.status === 'disabled') {
      throw new CliError(`The webhook of instance ${instanceId} is disabled (${endpoint.disabled_reason ?? 'no reason recorded'}); nothing to pause. Resume it to send again.`);
    }
    await client.query(`UPDATE webhook_endpoints SET status = 'paused', updated_at = now() WHERE instance_id = $1`, [instanceId]);
    return { instance_id: instanceId, status: 'paused' as EndpointStatus, previous_status: endpoint.status };
  });
}

/**
 * Sends again (the deliveries held while paused go out as they fall due), with a fresh failure count, so a
 * customer who fixed the receiver is not disabled again for failures from before the fix.
 * Resuming an endpoint that is active already changes nothing.
 */
export async function resumeWebhook(pool: Pool, instanceId: string) {
  return withTransaction(pool, async (client) => {
    const endpoint = await requireEndpoint(client, instanceId, true);
    if (endpoint.status !== 'active') {
      await client.query(`UPDATE webhook_endpoints SET ${REACTIVATE}, updated_at = now() WHERE instance_id = $1`, [instanceId]);
    }
    return { instance_id: instanceId, status: 'active' as EndpointStatus, previous_status: endpoint.status };
  });
}
