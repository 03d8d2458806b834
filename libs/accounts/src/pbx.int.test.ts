import { describe, expect, it } from 'vitest';
import { sql, z } from '@gw/db';
import { SEAL_USES } from '@gw/security';
import { useIsolatedDatabase } from '../../../test/support/isolated-database.ts';
import { AccountError } from './errors.ts';
import { createPbx, disablePbx, listPbxIntegrations, rotatePbxSecret, setPbxTemplate } from './pbx.ts';
import { customerRow, instanceOf, testBox } from './testing.ts';

// What a customer may see of its PBX integrations: everything but their secrets.
const db = useIsolatedDatabase();
const box = testBox();
const baseUrl = 'https://gateway.example';

describe('listPbxIntegrations', () => {
  it("lists the customer's own integrations, oldest first, disabled ones included, with no secret", async () => {
    const acme = await customerRow(db.pool, 'Acme');
    const other = await customerRow(db.pool, 'Other');
    const desk = await instanceOf(db.pool, box, acme, 'desk');
    const theirs = await instanceOf(db.pool, box, other, 'desk');
    const signed = await createPbx(db.pool, box, { customerId: acme, instanceId: desk.instance_id, hmac: true, baseUrl });
    const plain = await createPbx(db.pool, box, { customerId: acme, instanceId: desk.instance_id, hmac: false, ratePerMinute: 30, baseUrl });
    const elsewhere = await createPbx(db.pool, box, { customerId: other, instanceId: theirs.instance_id, hmac: false, baseUrl });
    const rotated = await rotatePbxSecret(db.pool, box, signed.pbx_integration_id, undefined);
    await setPbxTemplate(db.pool, plain.pbx_integration_id, 'voicemail', 'We got your voicemail.', false);
    await disablePbx(db.pool, plain.pbx_integration_id);

    const listed = await listPbxIntegrations(db.pool, acme);
    expect(listed.map((i) => i.pbx_integration_id)).toEqual([signed.pbx_integration_id, plain.pbx_integration_id]);
    expect(listed[0]).toMatchObject({ instance_id: desk.instance_id, hmac: true, rate_limit_per_minute: 120, disabled_at: null, default_purpose: 'support' });
    expect(listed[1]).toMatchObject({ hmac: false, rate_limit_per_minute: 30, disabled_at: expect.any(String) });
    expect(listed[1]!.templates.voicemail).toBe('We got your voicemail.');
    expect(listed[1]!.enabled_events).not.toContain('voicemail');
    expect(Object.keys(listed[0]!).sort()).toEqual(
      ['created_at', 'default_purpose', 'disabled_at', 'enabled_events', 'hmac', 'instance_id', 'pbx_integration_id', 'rate_limit_per_minute', 'templates'],
    );
    const shown = JSON.stringify(listed);
    for (const secret of [signed.pbx_secret, signed.pbx_signing_secret!, plain.pbx_secret, rotated.pbx_secret, rotated.pbx_signing_secret!]) expect(shown).not.toContain(secret);
    expect(shown).not.toMatch(/pbxsig_|"pbx_[A-Za-z0-9_-]{40,}"|v2\./);

    expect((await listPbxIntegrations(db.pool, other)).map((i) => i.pbx_integration_id)).toEqual([elsewhere.pbx_integration_id]);
    expect(await listPbxIntegrations(db.pool, 'cus_nobody')).toEqual([]);
  });
});

describe('createPbx', () => {
  it("refuses another customer's instance, as not found", async () => {
    const acme = await customerRow(db.pool, 'Acme');
    const other = await customerRow(db.pool, 'Other');
    const theirs = await instanceOf(db.pool, box, other, 'desk');
    await expect(createPbx(db.pool, box, { customerId: acme, instanceId: theirs.instance_id, hmac: false, baseUrl })).rejects.toEqual(
      new AccountError('not_found', `Customer ${acme} has no instance ${theirs.instance_id}.`),
    );
    expect(await listPbxIntegrations(db.pool, acme)).toEqual([]);
  });

  it('refuses an unknown integration, event or empty template with the CLI wording', async () => {
    await expect(disablePbx(db.pool, 999_999)).rejects.toEqual(new AccountError('not_found', 'No PBX integration 999999.'));
    const acme = await customerRow(db.pool, 'Acme');
    const desk = await instanceOf(db.pool, box, acme, 'desk');
    const { pbx_integration_id: id } = await createPbx(db.pool, box, { customerId: acme, instanceId: desk.instance_id, hmac: false, baseUrl });
    await expect(setPbxTemplate(db.pool, id, 'birthday', 'hi', undefined)).rejects.toMatchObject({ code: 'invalid', message: expect.stringMatching(/^Templates exist for /) });
    await expect(setPbxTemplate(db.pool, id, 'voicemail', '  ', undefined)).rejects.toEqual(new AccountError('invalid', 'A template needs some text.'));
  });
});

describe('customer scope', () => {
  it("with a customer, rotates, edits and disables that customer's own integrations only; another's is not found and stays as it was", async () => {
    const acme = await customerRow(db.pool, 'Acme');
    const other = await customerRow(db.pool, 'Other');
    const desk = await instanceOf(db.pool, box, acme, 'desk');
    const mine = await createPbx(db.pool, box, { customerId: acme, instanceId: desk.instance_id, hmac: false, baseUrl });
    const id = mine.pbx_integration_id;

    const rotated = await rotatePbxSecret(db.pool, box, id, true, { customerId: acme });
    expect(rotated).toEqual({ pbx_integration_id: id, pbx_secret: expect.stringMatching(/^pbx_/), pbx_signing_secret: expect.stringMatching(/^pbxsig_/) });
    expect((await rotatePbxSecret(db.pool, box, id, false, { customerId: acme })).pbx_signing_secret).toBeUndefined();
    expect((await setPbxTemplate(db.pool, id, 'missed_call', 'Missed you at {call_time}.', true, { customerId: acme })).templates.missed_call).toBe('Missed you at {call_time}.');

    const before = await listPbxIntegrations(db.pool, acme);
    const notFound = new AccountError('not_found', `No PBX integration ${id}.`);
    await expect(rotatePbxSecret(db.pool, box, id, true, { customerId: other })).rejects.toEqual(notFound);
    await expect(setPbxTemplate(db.pool, id, 'missed_call', 'Hijacked.', false, { customerId: other })).rejects.toEqual(notFound);
    await expect(disablePbx(db.pool, id, { customerId: other })).rejects.toEqual(notFound);
    // The same answer as for an integration that does not exist.
    await expect(rotatePbxSecret(db.pool, box, 999_999, undefined, { customerId: other })).rejects.toEqual(new AccountError('not_found', 'No PBX integration 999999.'));
    expect(await listPbxIntegrations(db.pool, acme)).toEqual(before);

    expect(await disablePbx(db.pool, id, { customerId: acme })).toEqual({ pbx_integration_id: id, disabled: true });
    // Without a customer (the operator): any integration.
    expect((await rotatePbxSecret(db.pool, box, id, undefined)).pbx_integration_id).toBe(id);
  });
});

describe('the PBX signing secret at rest', () => {
  const sealedOf = (id: number) => db.pool.oneFirst(sql.type(z.object({ sealed: z.string() }))`SELECT hmac_secret_enc AS sealed FROM pbx_integrations WHERE id = ${id}`);

  it('is sealed bound to its integration (create and rotate-secret): it does not open as another integration\'s', async () => {
    const acme = await customerRow(db.pool, 'Acme');
    const desk = await instanceOf(db.pool, box, acme, 'desk');
    const first = await createPbx(db.pool, box, { customerId: acme, instanceId: desk.instance_id, hmac: true, baseUrl });
    const second = await createPbx(db.pool, box, { customerId: acme, instanceId: desk.instance_id, hmac: true, baseUrl });
    const [a, b] = [first.pbx_integration_id, second.pbx_integration_id];
    expect(box.open(await sealedOf(a), SEAL_USES.pbxHmacSecret(a))).toBe(first.pbx_signing_secret);
    expect(box.open(await sealedOf(b), SEAL_USES.pbxHmacSecret(b))).toBe(second.pbx_signing_secret);
    const copied = await sealedOf(a);
    expect(() => box.openFormerlyUnbound(copied, SEAL_USES.pbxHmacSecret(b))).toThrow(/for this use/);

    const rotated = await rotatePbxSecret(db.pool, box, b, undefined);
    const resealed = await sealedOf(b);
    expect(box.open(resealed, SEAL_USES.pbxHmacSecret(b))).toBe(rotated.pbx_signing_secret);
    expect(() => box.openFormerlyUnbound(resealed, SEAL_USES.pbxHmacSecret(a))).toThrow(/for this use/);
  });
});
