import type { Pool } from '@gw/db';
import { callManager, connectionState } from '@gw/evolution';
import type { SecretBox } from '@gw/security';
import { CliError } from './customers.ts';

interface ManagedInstance {
  id: string;
  name: string;
  managerUrl: string;
  managerInstance: string;
  apiKey: string;
}

async function managed(pool: Pool, box: SecretBox, instanceId: string): Promise<ManagedInstance> {
  const result = await pool.query<{ id: string; name: string; manager_url: string; manager_instance: string; manager_api_key_enc: string }>(
    'SELECT id, name, manager_url, manager_instance, manager_api_key_enc FROM instances WHERE id = $1 OR name = $1 ORDER BY (id = $1) DESC LIMIT 1',
    [instanceId],
  );
  const row = result.rows[0];
  if (!row) throw new CliError(`No instance ${instanceId}.`);
  return { id: row.id, name: row.name, managerUrl: row.manager_url, managerInstance: row.manager_instance, apiKey: box.open(row.manager_api_key_enc) };
}

/**
 * Drives the simulator as the recipient's phone would: the gateway then sees the resulting
 * events through the manager's webhook, exactly as with a real instance.
 */
export async function simulate(pool: Pool, box: SecretBox, simulatorKey: string, instanceId: string, action: 'pair' | 'disconnect' | 'inbound' | 'call', body: Record<string, unknown> = {}) {
  const instance = await managed(pool, box, instanceId);
  const path = `/sim/instances/${encodeURIComponent(instance.managerInstance)}/${action}`;
  const { status, body: answer } = await callManager('POST', `${instance.managerUrl.replace(/\/+$/, '')}${path}`, simulatorKey, 5000, body);
  if (status >= 300) throw new CliError(`The simulator refused ${action} (HTTP ${status}): ${JSON.stringify(answer).slice(0, 300)}`);
  return { instance_id: instance.id, action, result: answer };
}

/** The instance's state as the manager reports it now, beside the gateway's projection of its events. */
export async function instanceStatus(pool: Pool, box: SecretBox, instanceId: string) {
  const instance = await managed(pool, box, instanceId);
  let managerState: string;
  try {
    managerState = await connectionState(instance.managerUrl, instance.apiKey, instance.managerInstance);
  } catch (error) {
    managerState = `unreachable (${(error as Error).message})`;
  }
  const projection = await pool.query<{ connection_state: string; qr_available: boolean; updated_at: Date }>(
    'SELECT connection_state, qr_available, updated_at FROM instance_connections WHERE instance_id = $1',
    [instance.id],
  );
  const row = projection.rows[0];
  return {
    instance_id: instance.id,
    instance_name: instance.name,
    manager_state: managerState,
    connection_state: row?.connection_state ?? null,
    qr_available: row?.qr_available ?? false,
    last_event_at: row?.updated_at.toISOString() ?? null,
  };
}
