import { describe, expect, it } from 'vitest';
import { useIsolatedDatabase } from '../../../test/support/isolated-database.ts';
import { AccountError } from './errors.ts';
import { createInstance, getInstanceForCustomer, listInstances } from './instances.ts';
import { customerRow, instanceOf, testBox } from './testing.ts';

// What a customer may see of its instances, and only of its own.
const db = useIsolatedDatabase();
const box = testBox();

describe('listInstances', () => {
  it("lists the customer's own instances, oldest first, without what reaches their manager", async () => {
    const acme = await customerRow(db.pool, 'Acme');
    const other = await customerRow(db.pool, 'Other');
    const frontDesk = await instanceOf(db.pool, box, acme, 'front-desk');
    const backOffice = await instanceOf(db.pool, box, acme, 'back-office');
    const elsewhere = await instanceOf(db.pool, box, other, 'front-desk');

    const listed = await listInstances(db.pool, acme);
    expect(listed.map((i) => i.id)).toEqual([frontDesk.instance_id, backOffice.instance_id]);
    expect(listed[0]).toEqual({ id: frontDesk.instance_id, name: 'front-desk', manager_instance: 'mgr-front-desk', created_at: expect.any(String) });
    expect(new Date(listed[0]!.created_at).toISOString()).toBe(listed[0]!.created_at);
    expect(JSON.stringify(listed)).not.toMatch(/manager-key|http:\/\/127\.0\.0\.1:9/);
    expect((await listInstances(db.pool, other)).map((i) => i.id)).toEqual([elsewhere.instance_id]);
    expect(await listInstances(db.pool, 'cus_nobody')).toEqual([]);
  });
});

describe('getInstanceForCustomer', () => {
  it("returns the customer's own instance, and null for another customer's or an unknown one", async () => {
    const acme = await customerRow(db.pool, 'Acme');
    const other = await customerRow(db.pool, 'Other');
    const mine = await instanceOf(db.pool, box, acme, 'reception');
    const theirs = await instanceOf(db.pool, box, other, 'reception');

    const found = await getInstanceForCustomer(db.pool, acme, mine.instance_id);
    expect(found).toEqual((await listInstances(db.pool, acme))[0]);
    expect(await getInstanceForCustomer(db.pool, acme, theirs.instance_id)).toBeNull();
    expect(await getInstanceForCustomer(db.pool, other, mine.instance_id)).toBeNull();
    expect(await getInstanceForCustomer(db.pool, acme, 'ins_nope')).toBeNull();
    // By id only: another customer's instance name finds nothing either.
    expect(await getInstanceForCustomer(db.pool, acme, 'reception')).toBeNull();
  });
});

describe('createInstance', () => {
  it('refuses with an AccountError: an unknown customer, a bad name, a name the customer already uses', async () => {
    const acme = await customerRow(db.pool, 'Acme');
    await instanceOf(db.pool, box, acme, 'desk');
    const input = { managerUrl: 'http://127.0.0.1:9', managerApiKey: 'k', createOnManager: false };
    await expect(createInstance(db.pool, box, { ...input, customerId: 'cus_nope', name: 'desk' })).rejects.toEqual(new AccountError('not_found', 'No customer cus_nope.'));
    await expect(createInstance(db.pool, box, { ...input, customerId: acme, name: 'a desk' })).rejects.toMatchObject({ code: 'invalid' });
    const duplicate = createInstance(db.pool, box, { ...input, customerId: acme, name: 'desk' });
    await expect(duplicate).rejects.toBeInstanceOf(AccountError);
    await expect(duplicate).rejects.toMatchObject({ code: 'conflict', message: 'The customer already has an instance named desk.' });
  });

  it("never takes a manager's instance name that another customer's live instance uses there (a retry would replace it)", async () => {
    const [acme, globex] = [await customerRow(db.pool, 'Acme'), await customerRow(db.pool, 'Globex')];
    const input = { managerUrl: 'http://127.0.0.1:9', managerApiKey: 'k', createOnManager: false };
    const first = await createInstance(db.pool, box, { ...input, customerId: acme, name: 'main' });
    expect(first.manager_instance).toMatch(/^main-[0-9a-f]{16}$/);
    // Refused before the manager is called (nothing listens on port 9).
    await expect(createInstance(db.pool, box, { ...input, createOnManager: true, customerId: globex, name: 'main', managerInstance: first.manager_instance })).rejects.toMatchObject({
      code: 'conflict',
      message: `The instance manager already has an instance named ${first.manager_instance} in use by the gateway.`,
    });
  });
});
