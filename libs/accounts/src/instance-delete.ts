import { sql, z, type Queryable } from '@gw/db';
import { connectionState, deleteInstance as deleteOnManager, logoutInstance, ManagerHttpError } from '@gw/evolution';
import { SEAL_USES, type SecretBox } from '@gw/security';
import { AccountError } from './errors.ts';
import { ManagedInstanceRow } from './instances.ts';

const PbxId = z.object({ id: z.number() });

/**
 * Deletes one of the customer's instances: on its manager first (logged out before, as Evolution
 * refuses to delete a connected instance), then marked deleted in Postgres. The row is kept, not
 * removed: the policy log, deliveries and manager events name the instance by id, and that
 * history outlives it. Its webhook token goes, so the manager's events are refused from then on.
 * Refused while an enabled PBX integration sends through the instance. A manager that no longer
 * knows the instance (404) counts as deleted there, so a delete interrupted halfway can be repeated.
 */
export async function deleteInstance(pool: Queryable, box: SecretBox, input: { customerId: string; instanceId: string }) {
  const row = await pool.maybeOne(sql.type(ManagedInstanceRow)`
    SELECT id, name, manager_url, manager_instance, manager_api_key_enc FROM instances
     WHERE id = ${input.instanceId} AND customer_id = ${input.customerId} AND deleted_at IS NULL`);
  if (!row) throw new AccountError('not_found', `Customer ${input.customerId} has no instance ${input.instanceId}.`);
  const pbx = await pool.anyFirst(sql.type(PbxId)`SELECT id FROM pbx_integrations WHERE instance_id = ${row.id} AND disabled_at IS NULL ORDER BY id`);
  if (pbx.length > 0) {
    const which = pbx.length === 1 ? `PBX integration ${pbx[0]} sends` : `PBX integrations ${pbx.join(', ')} send`;
    throw new AccountError('conflict', `${which} through ${row.name}. Disable ${pbx.length === 1 ? 'it' : 'them'} first, then delete the instance.`);
  }

  const apiKey = box.open(row.manager_api_key_enc, SEAL_USES.managerApiKey(row.id));
  try {
    if ((await connectionState(row.manager_url, apiKey, row.manager_instance)) === 'open') await logoutInstance(row.manager_url, apiKey, row.manager_instance);
    await deleteOnManager(row.manager_url, apiKey, row.manager_instance);
  } catch (error) {
    if (!(error instanceof ManagerHttpError && error.status === 404)) {
      // The client's message names the HTTP status or the network failure, never the apikey.
      throw new AccountError('refused', `The instance manager did not delete ${row.name} (${(error as Error).message}). Nothing was changed; try again.`);
    }
  }
  await pool.query(sql.typeAlias('void')`
    UPDATE instances SET deleted_at = now(), webhook_token_hash = NULL WHERE id = ${row.id} AND deleted_at IS NULL`);
  return { instance_id: row.id, instance_name: row.name, manager_instance: row.manager_instance };
}
