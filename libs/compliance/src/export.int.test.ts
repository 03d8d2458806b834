import { PassThrough, Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPool, sql, z, type Pool } from '@gw/db';
import type { SendDecided } from '@gw/events';
import { insertEntries } from '@gw/policy-log';
import { isolate, type Isolation } from '../../../test/support/infra.ts';
import { CSV_COLUMNS, ExportAborted, exportPolicyLog, type ExportOptions } from './export.ts';

// The export over real Postgres: entries of two customers inserted as the policy consumer writes
// them (more than one cursor batch), then read back through the filters, and stopped part-way.
let isolation: Isolation;
let pool: Pool;
const DAY = Date.UTC(2026, 2, 10);
const HOUR = 3_600_000;

function entry(n: number, customer: string): SendDecided {
  const refused = n % 5 === 0;
  return {
    event_id: `evt_${customer}_${n}`,
    correlation_id: `cmd_${customer}_${n}`,
    occurred_at: DAY + (n % 48) * HOUR,
    customer_id: customer,
    instance_id: n % 2 === 0 ? `ins_${customer}_a` : `ins_${customer}_b`,
    message_id: `msg_${customer}_${n}`,
    log_id: n,
    decision: refused ? 'rejected' : 'accepted',
    error_code: refused ? (n % 10 === 0 ? 'recipient_suppressed' : 'policy_violation') : null,
    error_message: refused ? 'Refused, "quoted", with commas' : null,
    reasons: [{ rule: 'module_enabled', outcome: 'pass', detail: JSON.stringify({ module: 'api' }) }],
    policy_version: 'v-test',
    recipient: `+1415555${String(1000 + (n % 300)).padStart(4, '0')}`,
    message_purpose: n % 3 === 0 ? 'operational' : 'transactional',
    message_digest: 'digest',
    dispatch: null,
    partition_chain: 0,
    prev_hash: '',
    entry_hash: `hash_${n}`,
  };
}

const all: SendDecided[] = [];

beforeAll(async () => {
  isolation = await isolate();
  // One connection: an export that left its transaction open would block every later statement.
  pool = await createPool(isolation.databaseUrl, { maxConnections: 1 });
  for (let n = 1; n <= 2600; n++) all.push(entry(n, n % 4 === 0 ? 'cus_b' : 'cus_a'));
  for (let i = 0; i < all.length; i += 500) await insertEntries(pool, all.slice(i, i + 500));
}, 120_000);

afterAll(async () => {
  await pool?.end();
  await isolation?.cleanup();
});

async function exported(options: Omit<ExportOptions, 'format'> & { format?: ExportOptions['format'] }) {
  const out = new PassThrough();
  const chunks: Buffer[] = [];
  out.on('data', (c: Buffer) => chunks.push(c));
  let announced: number | null = null;
  const result = await exportPolicyLog(pool, out, { format: 'ndjson', ...options, onStart: (total) => (announced = total) });
  const text = Buffer.concat(chunks).toString('utf8');
  return { result, announced, text, lines: options.format === 'csv' ? text.split('\r\n').filter(Boolean) : text.split('\n').filter(Boolean).map((l) => JSON.parse(l)) };
}

const expected = (match: (e: SendDecided) => boolean) => all.filter(match).map((e) => e.log_id);

describe('exportPolicyLog', () => {
  it('streams one customer\'s entries in log order, over several cursor batches, and announces the total first', async () => {
    const { result, announced, lines } = await exported({ customerId: 'cus_a' });
    const ids = expected((e) => e.customer_id === 'cus_a');
    expect(ids.length).toBeGreaterThan(1000);
    expect(lines.map((l: { log_id: number }) => l.log_id)).toEqual(ids);
    expect(result).toEqual({ rows: ids.length, total: ids.length });
    expect(announced).toBe(ids.length);
    expect(new Set(lines.map((l: { customer_id: string }) => l.customer_id))).toEqual(new Set(['cus_a']));
  });

  it('applies every filter of the dashboard, together', async () => {
    const cases: Array<[Omit<ExportOptions, 'format'>, (e: SendDecided) => boolean]> = [
      [{ customerId: 'cus_a', decision: 'rejected' }, (e) => e.customer_id === 'cus_a' && e.decision === 'rejected'],
      [{ customerId: 'cus_a', errorCode: 'recipient_suppressed' }, (e) => e.customer_id === 'cus_a' && e.error_code === 'recipient_suppressed'],
      [{ customerId: 'cus_b', purpose: 'operational' }, (e) => e.customer_id === 'cus_b' && e.message_purpose === 'operational'],
      [{ customerId: 'cus_a', instanceId: 'ins_cus_a_b' }, (e) => e.instance_id === 'ins_cus_a_b'],
      [{ customerId: 'cus_a', recipientDigits: '5551042' }, (e) => e.customer_id === 'cus_a' && e.recipient.includes('5551042')],
      [{ customerId: 'cus_b', from: new Date(DAY + 8 * HOUR), to: new Date(DAY + 12 * HOUR) }, (e) => e.customer_id === 'cus_b' && e.occurred_at >= DAY + 8 * HOUR && e.occurred_at < DAY + 12 * HOUR],
      [{ customerId: 'cus_a', decision: 'accepted', purpose: 'operational', from: new Date(DAY + 24 * HOUR) }, (e) => e.customer_id === 'cus_a' && e.decision === 'accepted' && e.message_purpose === 'operational' && e.occurred_at >= DAY + 24 * HOUR],
      // gatewayctl's: a time range over every customer.
      [{ from: new Date(DAY), to: new Date(DAY + HOUR) }, (e) => e.occurred_at < DAY + HOUR],
    ];
    for (const [filter, match] of cases) {
      const { lines, result } = await exported(filter);
      const ids = expected(match);
      expect(ids.length, JSON.stringify(filter)).toBeGreaterThan(0);
      expect(lines.map((l: { log_id: number }) => l.log_id), JSON.stringify(filter)).toEqual(ids);
      expect(result.total).toBe(ids.length);
    }
  });

  it('writes CSV with the header and one quoted line per entry', async () => {
    const { lines, result } = await exported({ customerId: 'cus_b', errorCode: 'recipient_suppressed', format: 'csv' });
    expect(lines[0]).toBe(CSV_COLUMNS.join(','));
    expect(lines).toHaveLength(result.rows + 1);
    expect(lines[1]).toContain('"Refused, ""quoted"", with commas"');
    expect(lines[1]).toContain('"[{""rule"":""module_enabled"",');
  });

  it('stops, and ends its snapshot, when the output goes away or the signal aborts', async () => {
    // An output that takes the first chunk and never drains, then is destroyed: a client that went away.
    const stalled = new Writable({ highWaterMark: 1, write: () => undefined });
    const destroyed = exportPolicyLog(pool, stalled, { format: 'ndjson', customerId: 'cus_a' });
    setTimeout(() => stalled.destroy(), 200);
    await expect(destroyed).rejects.toBeInstanceOf(ExportAborted);

    const abort = new AbortController();
    const slow = new Writable({ highWaterMark: 1, write: () => undefined });
    const aborted = exportPolicyLog(pool, slow, { format: 'csv', customerId: 'cus_a', signal: abort.signal });
    setTimeout(() => abort.abort(), 200);
    await expect(aborted).rejects.toBeInstanceOf(ExportAborted);

    // The pool's one connection is free again: no transaction or cursor was left open.
    const open = await pool.oneFirst(sql.type(z.object({ n: z.number() }))`SELECT count(*) AS n FROM pg_stat_activity WHERE datname = current_database() AND state LIKE 'idle in transaction%'`);
    expect(open).toBe(0);
    expect((await exported({ customerId: 'cus_b' })).result.rows).toBe(all.filter((e) => e.customer_id === 'cus_b').length);
  });
});
