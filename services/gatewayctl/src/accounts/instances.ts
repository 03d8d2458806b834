import type { Pool } from '@gw/db';
import { createInstance as createOnManager, callManager } from '@gw/evolution';
import { newId, type SecretBox } from '@gw/security';
import { CliError, requireCustomer } from './customers.ts';

export interface CreateInstanceInput {
  customerId: string;
  name: string;
  managerUrl: string;
  managerApiKey: string;
  /** The instance's name on the manager; created there when `createOnManager` is set. */
  managerInstance?: string;
  createOnManager: boolean;
}

export async function createInstance(pool: Pool, box: SecretBox, input: CreateInstanceInput) {
  await requireCustomer(pool, input.customerId);
  if (!/^[A-Za-z0-9._-]{1,64}$/.test(input.name)) throw new CliError('Instance names use letters, digits, ".", "_" and "-" (at most 64).');
  const id = newId('ins');
  const managerInstance = input.managerInstance ?? `${input.name}-${id.slice(-8)}`;
  let apiKey = input.managerApiKey;
  if (input.createOnManager) {
    const created = await createOnManager(input.managerUrl, input.managerApiKey, managerInstance);
    // Keep the instance's own token where the manager issued one: it can reach only this instance.
    if (created.token) apiKey = created.token;
  }
  try {
    await pool.query(
      `INSERT INTO instances (id, customer_id, name, manager_url, manager_instance, manager_api_key_enc)
       VALUES ($1, $2, $3, $4, $5, $6)`,
      [id, input.customerId, input.name, input.managerUrl, managerInstance, box.seal(apiKey)],
    );
  } catch (error) {
    if ((error as { code?: string }).code === '23505') throw new CliError(`The customer already has an instance named ${input.name}.`);
    throw error;
  }
  return { instance_id: id, instance_name: input.name, manager_instance: managerInstance, manager_url: input.managerUrl };
}

/** Simulator only: completes pairing as if the QR code had been scanned. */
export async function pairOnSimulator(simulatorUrl: string, globalKey: string, managerInstance: string): Promise<void> {
  const { status } = await callManager('POST', `${simulatorUrl}/sim/instances/${encodeURIComponent(managerInstance)}/pair`, globalKey, 5000, {});
  if (status !== 200 && status !== 201) throw new CliError(`The simulator refused to pair ${managerInstance} (HTTP ${status}).`);
}
