import { describe, expect, it } from 'vitest';
import { sql, z } from '@gw/db';
import { createLogger } from '@gw/observability';
import { useIsolatedDatabase } from '../../../test/support/isolated-database.ts';
import { InboundRetention } from './inbound-retention.ts';
import { saveInbound, saveReceipts, type InboundRow } from './store.ts';

// The inbound log's projection and its retention, against real Postgres.
const db = useIsolatedDatabase();
const DAY = 86_400_000;
const now = Date.UTC(2026, 10, 24, 12);

const row = (id: string, receivedAt: number, text = 'hello'): InboundRow => ({
  id, customerId: 'cus_a', instanceId: 'ins_a', chat: 'direct', sender: '+14155550100', text, messageType: 'conversation', externalId: `ext-${id}`, optAction: null, receivedAt,
});
const ids = () => db.pool.anyFirst(sql.type(z.object({ id: z.string() }))`SELECT id FROM inbound_messages ORDER BY id`);

describe('the inbound log', () => {
  it('keeps each received message once, under its event id, whatever its text holds', async () => {
    await saveInbound(db.pool, [row('m1', now, 'STOP'), { ...row('m2', now, 'nul \u0000 inside'), chat: 'group', groupId: '1203@g.us', optAction: 'flagged' }]);
    // A redelivered batch adds nothing.
    await saveInbound(db.pool, [row('m1', now, 'STOP')]);
    const rows = await db.pool.any(sql.type(z.object({ id: z.string(), chat: z.string(), group_id: z.string().nullable(), message_text: z.string(), opt_action: z.string().nullable() }))`
      SELECT id, chat, group_id, message_text, opt_action FROM inbound_messages ORDER BY id`);
    expect(rows).toEqual([
      { id: 'm1', chat: 'direct', group_id: null, message_text: 'STOP', opt_action: null },
      // Postgres text holds no NUL: it becomes U+FFFD rather than failing the batch.
      { id: 'm2', chat: 'group', group_id: '1203@g.us', message_text: 'nul \uFFFD inside', opt_action: 'flagged' },
    ]);
  });

  it('keeps the first report of each delivery status', async () => {
    await saveReceipts(db.pool, 'ins_a', [{ externalId: 'P1', status: 'delivered' }], now);
    await saveReceipts(db.pool, 'ins_a', [{ externalId: 'P1', status: 'delivered' }, { externalId: 'P1', status: 'read' }], now + 5_000);
    const rows = await db.pool.any(sql.type(z.object({ status: z.string(), at: z.date() }))`SELECT status, at FROM message_receipts WHERE provider_message_id = 'P1' ORDER BY at`);
    expect(rows.map((r) => [r.status, r.at.getTime()])).toEqual([['delivered', now], ['read', now + 5_000]]);
  });

  it('the purge deletes what is past the retention, and nothing newer', async () => {
    await db.pool.query(sql.typeAlias('void')`DELETE FROM inbound_messages`);
    await saveInbound(db.pool, [row('old1', now - 31 * DAY), row('old2', now - 30 * DAY - 1), row('edge', now - 30 * DAY + 1_000), row('new', now - DAY)]);
    const retention = new InboundRetention({ pool: db.pool, logger: createLogger('test', 'error') }, { retentionDays: 30, everyMs: 60_000 }, () => now);
    expect(await retention.purge()).toBe(2);
    expect(await ids()).toEqual(['edge', 'new']);
    expect(await retention.purge()).toBe(0);
  });
});
