import { openManagedInstance } from '@gw/accounts';
import type { Queryable } from '@gw/db';
import { callManager } from '@gw/evolution';
import type { SecretBox } from '@gw/security';
import { CliError } from '../action.ts';

/** Simulator only: completes pairing as if the QR code had been scanned. */
export async function pairOnSimulator(simulatorUrl: string, globalKey: string, managerInstance: string): Promise<void> {
  const { status } = await callManager('POST', `${simulatorUrl}/sim/instances/${encodeURIComponent(managerInstance)}/pair`, globalKey, 5000, {});
  if (status !== 200 && status !== 201) throw new CliError(`The simulator refused to pair ${managerInstance} (HTTP ${status}).`);
}

/**
 * Drives the simulator as the recipient's phone would: the gateway then sees the resulting
 * events through the manager's webhook, exactly as with a real instance.
 */
export async function simulate(pool: Queryable, box: SecretBox, simulatorKey: string, instanceId: string, action: 'pair' | 'disconnect' | 'inbound' | 'call', body: Record<string, unknown> = {}) {
  const instance = await openManagedInstance(pool, box, instanceId);
  const path = `/sim/instances/${encodeURIComponent(instance.managerInstance)}/${action}`;
  const { status, body: answer } = await callManager('POST', `${instance.managerUrl.replace(/\/+$/, '')}${path}`, simulatorKey, 5000, body);
  if (status >= 300) throw new CliError(`The simulator refused ${action} (HTTP ${status}): ${JSON.stringify(answer).slice(0, 300)}`);
  return { instance_id: instance.id, action, result: answer };
}
