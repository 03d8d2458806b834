import { beforeAll, describe, expect, it } from 'vitest';
import { sql, z } from '@gw/db';
import { useIsolatedDatabase } from '../../../test/support/isolated-database.ts';
import { mapInstanceEvent, type MapContext } from './map-event.ts';
import { saveConnection, saveLidLinks } from './store.ts';

// The connection projection ordered by the manager's own time, and the lid → phone projection,
// against real Postgres, fed by the mapping of the envelopes Evolution posts.
const db = useIsolatedDatabase();
const ctx: MapContext = { optOutKeywords: ['STOP'], optInKeywords: ['START'], acceptedCalls: new Set() };
const INSTANCE = 'ins_conn_order_0000000000000';
const arrival = Date.UTC(2026, 0, 5, 12);

beforeAll(async () => {
  await db.pool.query(sql.typeAlias('void')`
    INSERT INTO customers (id, name) VALUES ('cus_conn_order', 'Order Co') ON CONFLICT DO NOTHING`);
  await db.pool.query(sql.typeAlias('void')`
    INSERT INTO instances (id, customer_id, name, manager_url, manager_instance, manager_api_key_enc)
    VALUES (${INSTANCE}, 'cus_conn_order', 'reception', 'http://127.0.0.1:9', 'reception', 'unused')`);
});

/** Maps an envelope as the stage does and saves its connection change, arriving at `at`. */
async function arrive(envelope: Record<string, unknown>, at: number): Promise<void> {
  const mapped = mapInstanceEvent(envelope, ctx);
  await saveConnection(db.pool, INSTANCE, mapped.connection!, at);
}
const state = () =>
  db.pool.one(sql.type(z.object({ connection_state: z.string(), qr_available: z.boolean() }))`
    SELECT connection_state, qr_available FROM instance_connections WHERE instance_id = ${INSTANCE}`);
const update = (s: string, date_time?: string) => ({ event: 'connection.update', date_time, data: { instance: 'reception', state: s } });

describe('the connection projection', () => {
  it('keeps the newest report by the manager\'s date_time: a late retry of an older one does not overwrite it', async () => {
    await arrive(update('connecting', '2026-01-05T09:00:00.000Z'), arrival);
    await arrive(update('open', '2026-01-05T09:00:05.000Z'), arrival + 1_000);
    // The connecting report's retry, posted again (same body, same date_time) after a backoff.
    await arrive(update('connecting', '2026-01-05T09:00:00.000Z'), arrival + 10_000);
    expect(await state()).toEqual({ connection_state: 'open', qr_available: false });
    // A QR shown earlier than the open, arriving late, is no QR now either.
    await arrive({ event: 'qrcode.updated', date_time: '2026-01-05T09:00:01.000Z', data: { qrcode: { code: '2@x' } } }, arrival + 20_000);
    expect(await state()).toEqual({ connection_state: 'open', qr_available: false });
    // A later close wins.
    await arrive(update('close', '2026-01-05T09:10:00.000Z'), arrival + 30_000);
    expect(await state()).toEqual({ connection_state: 'close', qr_available: false });
  });

  it('falls back to the arrival time for a report without a valid date_time', async () => {
    await arrive(update('open', 'not a date'), arrival + 40_000);
    expect(await state()).toEqual({ connection_state: 'open', qr_available: false });
    await arrive(update('connecting'), arrival + 35_000);
    expect(await state()).toEqual({ connection_state: 'open', qr_available: false });
  });
});

describe('the lid → phone projection', () => {
  const links = () => db.pool.any(sql.type(z.object({ lid: z.string(), phone: z.string() }))`
    SELECT lid, phone FROM instance_lid_links WHERE instance_id = ${INSTANCE} ORDER BY lid`);

  it('learns each pair an envelope shows, keeps the newest, and takes an envelope that shows one lid twice', async () => {
    // 2.4.0-rc2: remoteJid the phone, remoteJidAlt the lid (with a device).
    const rc2 = { event: 'messages.upsert', data: { key: { remoteJid: '14155552671@s.whatsapp.net', remoteJidAlt: '123456789012345:4@lid', fromMe: false, id: 'A' }, message: { conversation: 'hi' } } };
    await saveLidLinks(db.pool, INSTANCE, mapInstanceEvent(rc2, ctx).links, arrival);
    expect(await links()).toEqual([{ lid: '123456789012345@lid', phone: '+14155552671' }]);
    // An older report does not overwrite a newer one; two pairs of one lid in one envelope do not fail it.
    await saveLidLinks(db.pool, INSTANCE, [{ lid: '123456789012345@lid', phone: '+14155550000' }], arrival - 1_000);
    await saveLidLinks(db.pool, INSTANCE, [{ lid: '999999999999@lid', phone: '+14155550001' }, { lid: '999999999999@lid', phone: '+14155550002' }], arrival);
    expect(await links()).toEqual([
      { lid: '123456789012345@lid', phone: '+14155552671' },
      { lid: '999999999999@lid', phone: '+14155550002' },
    ]);
  });
});
