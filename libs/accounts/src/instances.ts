import { createHash } from 'node:crypto';
import { sql, UniqueIntegrityConstraintViolationError, z, type Queryable } from '@gw/db';
import { connectionState, createInstance as createOnManager } from '@gw/evolution';
import { newId, SEAL_USES, type SecretBox } from '@gw/security';
import { requireCustomer } from './customers.ts';
import { AccountError } from './errors.ts';

/** An instance with what it takes to reach its manager (the apikey sealed). */
export const ManagedInstanceRow = z.object({ id: z.string(), name: z.string(), manager_url: z.string(), manager_instance: z.string(), manager_api_key_enc: z.string() });
/** The customer an instance belongs to. */
export const InstanceOwner = z.object({ customer_id: z.string() });
/** An instance as its customer may see it: nothing about reaching its manager. */
const InstanceRow = z.object({ id: z.string(), name: z.string(), manager_instance: z.string(), created_at: z.date() });
const ConnectionRow = z.object({ connection_state: z.string(), qr_available: z.boolean(), updated_at: z.date() });

export interface InstanceSummary {
  id: string;
  name: string;
  manager_instance: string;
  /** ISO 8601. */
  created_at: string;
}

/** An instance opened to call its manager: the apikey in the clear, so never returned to a caller as is. */
export interface ManagedInstance {
  id: string;
  name: string;
  managerUrl: string;
  managerInstance: string;
  apiKey: string;
}

export interface CreateInstanceInput {
  customerId: string;
  name: string;
  managerUrl: string;
  managerApiKey: string;
  /** The instance's name on the manager; created there when `createOnManager` is set. */
  managerInstance?: string;
  createOnManager: boolean;
}

const summary = (row: z.infer<typeof InstanceRow>): InstanceSummary => ({ id: row.id, name: row.name, manager_instance: row.manager_instance, created_at: row.created_at.toISOString() });

export async function createInstance(pool: Queryable, box: SecretBox, input: CreateInstanceInput) {
  await requireCustomer(pool, input.customerId);
  if (!/^[A-Za-z0-9._-]{1,64}$/.test(input.name)) throw new AccountError('invalid', 'Instance names use letters, digits, ".", "_" and "-" (at most 64).');
  // One create of a customer's name at a time (the lock is the transaction's): two at once would
  // otherwise share the manager's name below, and the second would replace the first's instance.
  return pool.transaction(async (tx) => {
    await tx.query(sql.typeAlias('void')`SELECT FROM pg_advisory_xact_lock(hashtext(${`instances/${input.customerId}/${input.name}`}))`);
    // Checked before the manager is asked, so a taken name leaves no instance behind on the manager
    // (the unique index still decides a race).
    if (await tx.exists(sql.typeAlias('void')`SELECT FROM instances WHERE customer_id = ${input.customerId} AND name = ${input.name} AND deleted_at IS NULL`)) {
      throw new AccountError('conflict', `The customer already has an instance named ${input.name}.`);
    }
    const id = newId('ins');
    // Named after the customer and the name, not this try: a try that timed out after the manager
    // had created the instance leaves it under the same name, and the next try replaces it
    // (replaceLeftover) instead of leaving a stray instance pairing on the manager.
    // 64 bits of the customer: two customers on one shared manager do not meet by chance.
    const managerInstance = input.managerInstance ?? `${input.name}-${createHash('sha256').update(input.customerId).digest('hex').slice(0, 16)}`;
    // replaceLeftover deletes whatever has that name on the manager: never a live instance of ours.
    if (input.createOnManager && await tx.exists(sql.typeAlias('void')`SELECT FROM instances WHERE manager_url = ${input.managerUrl} AND manager_instance = ${managerInstance} AND deleted_at IS NULL`)) {
      throw new AccountError('conflict', `The instance manager already has an instance named ${managerInstance} in use by the gateway.`);
    }
    let apiKey = input.managerApiKey;
    if (input.createOnManager) {
      const created = await createOnManager(input.managerUrl, input.managerApiKey, managerInstance, undefined, { replaceLeftover: true });
      // Keep the instance's own token where the manager issued one: it can reach only this instance.
      if (created.token) apiKey = created.token;
    }
    try {
      await tx.query(sql.typeAlias('void')`
        INSERT INTO instances (id, customer_id, name, manager_url, manager_instance, manager_api_key_enc)
        VALUES (${id}, ${input.customerId}, ${input.name}, ${input.managerUrl}, ${managerInstance}, ${box.seal(apiKey, SEAL_USES.managerApiKey(id))})`);
    } catch (error) {
      if (error instanceof UniqueIntegrityConstraintViolationError) throw new AccountError('conflict', `The customer already has an instance named ${input.name}.`);
      throw error;
    }
    return { instance_id: id, instance_name: input.name, manager_instance: managerInstance, manager_url: input.managerUrl };
  });
}

/** The customer's instances, oldest first; deleted ones are not listed. */
export async function listInstances(pool: Queryable, customerId: string): Promise<InstanceSummary[]> {
  const rows = await pool.any(sql.type(InstanceRow)`
    SELECT id, name, manager_instance, created_at FROM instances WHERE customer_id = ${customerId} AND deleted_at IS NULL ORDER BY created_at, id`);
  return rows.map(summary);
}

/** One of the customer's instances; null when there is none by that id, it belongs to another customer or it was deleted. */
export async function getInstanceForCustomer(pool: Queryable, customerId: string, instanceId: string): Promise<InstanceSummary | null> {
  const row = await pool.maybeOne(sql.type(InstanceRow)`
    SELECT id, name, manager_instance, created_at FROM instances WHERE id = ${instanceId} AND customer_id = ${customerId} AND deleted_at IS NULL`);
  return row ? summary(row) : null;
}

/** The instance by id, or else by name (an operator's lookup: names are unique only per customer), opened to call its manager. */
export async function openManagedInstance(pool: Queryable, box: SecretBox, instanceId: string): Promise<ManagedInstance> {
  const row = await pool.maybeOne(sql.type(ManagedInstanceRow)`
    SELECT id, name, manager_url, manager_instance, manager_api_key_enc FROM instances
     WHERE id = ${instanceId} OR name = ${instanceId} ORDER BY (id = ${instanceId}) DESC LIMIT 1`);
  if (!row) throw new AccountError('not_found', `No instance ${instanceId}.`);
  return { id: row.id, name: row.name, managerUrl: row.manager_url, managerInstance: row.manager_instance, apiKey: box.open(row.manager_api_key_enc, SEAL_USES.managerApiKey(row.id)) };
}

/** The instance's state as the manager reports it now, beside the gateway's projection of its events. */
export async function instanceStatus(pool: Queryable, box: SecretBox, instanceId: string) {
  const instance = await openManagedInstance(pool, box, instanceId);
  let managerState: string;
  try {
    managerState = await connectionState(instance.managerUrl, instance.apiKey, instance.managerInstance);
  } catch (error) {
    managerState = `unreachable (${(error as Error).message})`;
  }
  const row = await pool.maybeOne(sql.type(ConnectionRow)`
    SELECT connection_state, qr_available, updated_at FROM instance_connections WHERE instance_id = ${instance.id}`);
  return {
    instance_id: instance.id,
    instance_name: instance.name,
    manager_state: managerState,
    connection_state: row?.connection_state ?? null,
    qr_available: row?.qr_available ?? false,
    last_event_at: row?.updated_at.toISOString() ?? null,
  };
}
