import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPool, sql, z, type Pool } from '@gw/db';
import { isolate, type Isolation } from '../../../test/support/infra.ts';
// The manager is the point here: a real simulator over HTTP, as the other int tests reach it.
import { startSimulator, type Harness } from '../../../services/instance-simulator/src/testing/sim-harness.ts';
import { AccountError } from './errors.ts';
import { deleteInstance } from './instance-delete.ts';
import { setInstanceWebhook } from './instance-webhook.ts';
import { createInstance, getInstanceForCustomer, listInstances } from './instances.ts';
import { createPbx, disablePbx } from './pbx.ts';
import { customerRow, testBox } from './testing.ts';

// Deleting an instance: gone from its manager and from every customer-facing list, its history kept.
let isolation: Isolation;
let pool: Pool;
let sim: Harness;
const box = testBox();

beforeAll(async () => {
  isolation = await isolate();
  pool = await createPool(isolation.databaseUrl, { maxConnections: 2 });
  sim = await startSimulator({ logger: false });
}, 120_000);

afterAll(async () => {
  await sim?.close();
  await pool?.end();
  await isolation?.cleanup();
});

const onManager = (customerId: string, name: string) =>
  createInstance(pool, box, { customerId, name, managerUrl: sim.baseUrl, managerApiKey: sim.globalKey, createOnManager: true });
const managerState = async (managerInstance: string) => (await sim.call('GET', `/instance/connectionState/${managerInstance}`)).status;
const Row = z.object({ deleted_at: z.date().nullable(), webhook_token_hash: z.instanceof(Buffer).nullable() });

describe('deleteInstance', () => {
  it('logs a connected instance out, deletes it on the manager, and marks it deleted (kept, its webhook token gone)', async () => {
    const acme = await customerRow(pool, 'Acme');
    const created = await onManager(acme, 'front-desk');
    await setInstanceWebhook(pool, box, { instanceId: created.instance_id, baseUrl: 'http://127.0.0.1:9' });
    expect((await sim.call('POST', `/sim/instances/${created.manager_instance}/pair`)).status).toBe(200);

    expect(await deleteInstance(pool, box, { customerId: acme, instanceId: created.instance_id })).toEqual({
      instance_id: created.instance_id,
      instance_name: 'front-desk',
      manager_instance: created.manager_instance,
    });
    expect(await managerState(created.manager_instance)).toBe(404);
    const row = await pool.one(sql.type(Row)`SELECT deleted_at, webhook_token_hash FROM instances WHERE id = ${created.instance_id}`);
    expect(row.deleted_at).toBeInstanceOf(Date);
    expect(row.webhook_token_hash).toBeNull();
    expect(await listInstances(pool, acme)).toEqual([]);
    expect(await getInstanceForCustomer(pool, acme, created.instance_id)).toBeNull();
    // Deleted once: a second time finds nothing to delete.
    await expect(deleteInstance(pool, box, { customerId: acme, instanceId: created.instance_id })).rejects.toMatchObject({ code: 'not_found' });
    // Its name is free again for a new instance.
    const again = await onManager(acme, 'front-desk');
    expect((await listInstances(pool, acme)).map((i) => i.id)).toEqual([again.instance_id]);
  });

  it("refuses another customer's instance, and one an enabled PBX integration sends through (until it is disabled)", async () => {
    const acme = await customerRow(pool, 'Acme');
    const other = await customerRow(pool, 'Other');
    const created = await onManager(acme, 'reception');
    await expect(deleteInstance(pool, box, { customerId: other, instanceId: created.instance_id })).rejects.toMatchObject({ code: 'not_found' });

    const pbx = await createPbx(pool, box, { customerId: acme, instanceId: created.instance_id, hmac: false, baseUrl: 'http://127.0.0.1:9' });
    const refused = deleteInstance(pool, box, { customerId: acme, instanceId: created.instance_id });
    await expect(refused).rejects.toBeInstanceOf(AccountError);
    await expect(refused).rejects.toMatchObject({ code: 'conflict', message: `PBX integration ${pbx.pbx_integration_id} sends through reception. Disable it first, then delete the instance.` });
    expect(await managerState(created.manager_instance)).toBe(200);

    await disablePbx(pool, pbx.pbx_integration_id);
    await deleteInstance(pool, box, { customerId: acme, instanceId: created.instance_id });
    expect(await managerState(created.manager_instance)).toBe(404);
  });

  it('completes a delete the manager already did (404 there), and changes nothing when the manager cannot be reached', async () => {
    const acme = await customerRow(pool, 'Acme');
    const created = await onManager(acme, 'gone-already');
    expect((await sim.call('DELETE', `/instance/delete/${created.manager_instance}`)).status).toBe(200);
    await deleteInstance(pool, box, { customerId: acme, instanceId: created.instance_id });
    expect(await getInstanceForCustomer(pool, acme, created.instance_id)).toBeNull();

    const unreachable = await createInstance(pool, box, { customerId: acme, name: 'nowhere', managerUrl: 'http://127.0.0.1:9', managerApiKey: 'k', createOnManager: false });
    await expect(deleteInstance(pool, box, { customerId: acme, instanceId: unreachable.instance_id })).rejects.toMatchObject({ code: 'refused' });
    expect(await getInstanceForCustomer(pool, acme, unreachable.instance_id)).not.toBeNull();
  });
});
