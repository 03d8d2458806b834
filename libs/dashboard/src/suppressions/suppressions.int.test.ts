import { beforeAll, describe, expect, it } from 'vitest';
import { sql } from '@gw/db';
import type { FollowedRecord, TestAccount } from '../../../../test/support/api/api-fixture.ts';
import { useApiFixture } from '../../../../test/support/api/api-fixture.ts';
import { memberWithRole, type TestMember } from '../../../../test/support/dashboard/members.ts';
import { textOf } from '../../../../test/support/dashboard/page-client.ts';
import { csvExport } from './csv.ts';
import { parseSuppressionQuery } from './query.ts';

// /suppressed-recipients: what the projection holds (current set with each opt-out's cause, and
// the history), filters, pages and the CSV; the manual forms append the policy facts (the policy
// consumer does not run here, so rows are inserted as it would write them); every row is its own
// customer's.
const suite = useApiFixture();
const app = () => suite.fixture.app;
const pool = () => suite.fixture.runtime.pool;

let account: TestAccount;
let other: TestAccount;
let owner: TestMember;
let compliance: TestMember;
let viewer: TestMember;
let stranger: TestMember;

const minutesAgo = (m: number) => new Date(Date.now() - m * 60_000);

async function inbound(customerId: string, instanceId: string, row: { id: string; sender: string; text: string; opt: string | null; at: Date }) {
  await pool().query(sql.typeAlias('void')`
    INSERT INTO inbound_messages (id, customer_id, instance_id, chat, sender, message_text, opt_action, received_at)
    VALUES (${row.id}, ${customerId}, ${instanceId}, 'direct', ${row.sender}, ${row.text}, ${row.opt}, ${row.at.toISOString()}::timestamptz)`);
}

async function history(customerId: string, row: { recipient: string; action: 'suppressed' | 'unsuppressed'; source: string; reason: string; by: string; at: Date; instanceId?: string; inboundId?: string }) {
  await pool().query(sql.typeAlias('void')`
    INSERT INTO suppression_history (customer_id, recipient, action, source, reason, created_by, at, instance_id, inbound_message_id)
    VALUES (${customerId}, ${row.recipient}, ${row.action}, ${row.source}, ${row.reason}, ${row.by}, ${row.at.toISOString()}::timestamptz, ${row.instanceId ?? null}, ${row.inboundId ?? null})`);
}

async function suppression(customerId: string, row: { recipient: string; source: string; reason: string; by: string; at: Date }) {
  await pool().query(sql.typeAlias('void')`
    INSERT INTO suppressions (customer_id, recipient, source, reason, created_by, created_at)
    VALUES (${customerId}, ${row.recipient}, ${row.source}, ${row.reason}, ${row.by}, ${row.at.toISOString()}::timestamptz)`);
}

/** An opt-out as the consumers write it: the inbound STOP, its history row and the suppression. */
async function optOut(customerId: string, instanceId: string, recipient: string, inboundId: string, text: string, at: Date, keep = true) {
  if (keep) await inbound(customerId, instanceId, { id: inboundId, sender: recipient, text, opt: 'opt_out', at });
  await history(customerId, { recipient, action: 'suppressed', source: 'opt_out', reason: 'keyword:STOP', by: 'recipient', at, instanceId, inboundId });
  await suppression(customerId, { recipient, source: 'opt_out', reason: 'keyword:STOP', by: 'recipient', at });
}

const rowOf = (html: string, recipient: string, source: string) => new RegExp(`<tr data-recipient="${recipient.replace('+', '\\+')}" data-source="${source}">[\\s\\S]*?</tr>`).exec(html)?.[0] ?? '';
const currentTable = (html: string) => /<table id="current-list"[^>]*>[\s\S]*?<\/table>/.exec(html)?.[0] ?? '';
const historyTable = (html: string) => /<table id="history-list"[^>]*>[\s\S]*?<\/table>/.exec(html)?.[0] ?? '';

/** The policy fact appended for this customer and recipient, of this type. */
const factFor = (customerId: string, type: string, recipient: string) => (r: FollowedRecord) =>
  r.event.type === 'PolicyInputRecorded' && r.event.payload.customer_id === customerId && r.event.payload.input_type === type && (JSON.parse(r.event.payload.payload) as { recipient: string }).recipient === recipient;

beforeAll(async () => {
  account = await suite.fixture.account();
  other = await suite.fixture.account();
  const c = account.customer_id;
  const i = account.instance_id;
  owner = await memberWithRole(app(), pool(), suite.fixture.box, c, 'owner');
  compliance = await memberWithRole(app(), pool(), suite.fixture.box, c, 'compliance');
  viewer = await memberWithRole(app(), pool(), suite.fixture.box, c, 'viewer');
  stranger = await memberWithRole(app(), pool(), suite.fixture.box, other.customer_id, 'owner');

  // An opt-out whose message is kept; an opt-out opted out twice (the newest cause counts); one
  // whose message was purged; an opt-out then opt-back; a manual suppression, and one lifted.
  await optOut(c, i, '+14155550101', 'in-a-101', 'STOP please', minutesAgo(10));
  await inbound(c, i, { id: 'in-a-102-old', sender: '+14155550102', text: 'STOP (first time)', opt: 'opt_out', at: minutesAgo(300) });
  await history(c, { recipient: '+14155550102', action: 'suppressed', source: 'opt_out', reason: 'keyword:STOP', by: 'recipient', at: minutesAgo(300), instanceId: i, inboundId: 'in-a-102-old' });
  await history(c, { recipient: '+14155550102', action: 'unsuppressed', source: 'opt_out', reason: 'keyword:START', by: 'recipient', at: minutesAgo(200), instanceId: i, inboundId: 'in-a-102-start' });
  await optOut(c, i, '+14155550102', 'in-a-102-new', 'stop texting me STOP', minutesAgo(9));
  await optOut(c, i, '+14155550103', 'in-a-103-gone', '', minutesAgo(8), false);
  await history(c, { recipient: '+14155550107', action: 'suppressed', source: 'opt_out', reason: 'keyword:STOP', by: 'recipient', at: minutesAgo(30), instanceId: i, inboundId: 'in-a-107' });
  await history(c, { recipient: '+14155550107', action: 'unsuppressed', source: 'opt_out', reason: 'keyword:START', by: 'recipient', at: minutesAgo(20), instanceId: i, inboundId: 'in-a-107-start' });
  await inbound(c, i, { id: 'in-a-107-start', sender: '+14155550107', text: 'START', opt: 'opt_in', at: minutesAgo(20) });
  await suppression(c, { recipient: '+14155550104', source: 'manual', reason: 'Asked at the desk', by: 'ann@example.test', at: new Date('2024-01-10T10:00:00Z') });
  await history(c, { recipient: '+14155550104', action: 'suppressed', source: 'manual', reason: 'Asked at the desk', by: 'ann@example.test', at: new Date('2024-01-10T10:00:00Z') });
  await history(c, { recipient: '+14155550108', action: 'suppressed', source: 'manual', reason: 'Wrong number', by: 'ann@example.test', at: minutesAgo(50) });
  await history(c, { recipient: '+14155550108', action: 'unsuppressed', source: 'manual', reason: 'Was our patient after all', by: 'bob@example.test', at: minutesAgo(40) });
  // Sixty more, for the pages (older than the ones above), three at each instant.
  const base = Date.now();
  for (let n = 0; n < 60; n++) {
    await suppression(c, { recipient: `+1202555${String(1000 + n)}`, source: 'manual', reason: `bulk ${n}`, by: 'ann@example.test', at: new Date(base - (1000 + Math.floor(n / 3)) * 60_000) });
  }

  // The other customer's, which no member of this one may see.
  await optOut(other.customer_id, other.instance_id, '+14155550999', 'in-b-999', 'STOP from the other customer', minutesAgo(5));
  await suppression(other.customer_id, { recipient: '+14155550998', source: 'manual', reason: 'other customer reason', by: 'eve@example.test', at: minutesAgo(5) });
}, 180_000);

describe('the current list', () => {
  it('shows each suppression with its kind, reason, who and since; each opt-out with the message that caused it', async () => {
    const page = await compliance.client.get('/suppressed-recipients');
    expect(page.status, page.html).toBe(200);
    const kept = rowOf(page.html, '+14155550101', 'opt_out');
    expect(kept).toContain('>Opted out<');
    expect(kept).toContain('Replied “STOP”');
    expect(kept).toContain('by the recipient');
    expect(kept).toContain('<blockquote class="message-text">STOP please</blockquote>');
    expect(kept).toContain(`on ${account.instance_name}`);
    expect(kept).toContain('href="/inbound-logs?id=in-a-101"');
    // Opted out twice: the newest opt-out is the cause.
    const twice = rowOf(page.html, '+14155550102', 'opt_out');
    expect(twice).toContain('stop texting me STOP');
    expect(twice).not.toContain('first time');
    // The message was purged by the retention job: said plainly.
    expect(rowOf(page.html, '+14155550103', 'opt_out')).toContain('The message that caused it is no longer kept: received messages are deleted after 30 days.');
    // The oldest, on the second page.
    const manual = rowOf((await compliance.client.get('/suppressed-recipients?page=2')).html, '+14155550104', 'manual');
    expect(manual).toContain('>Manual<');
    expect(manual).toContain('Asked at the desk');
    expect(manual).toContain('by ann@example.test');
    expect(manual).toContain('Added by a person.');
    expect(manual).toContain('2024-01-10 10:00:00 UTC');
    // Opted back in: not suppressed now.
    expect(currentTable(page.html)).not.toContain('+14155550107');
    expect(page.html).toContain('1–50 of 64');
    // A compliance member reads, and is told who can change the list.
    expect(page.html).not.toContain('id="add"');
    expect(page.html).toContain('Owners and admins can add a number');
  });

  it('shows owners the forms, and a way to lift each manual suppression', async () => {
    const page = await owner.client.get('/suppressed-recipients?phone=4155550104');
    expect(page.html).toContain('<section class="card" id="add">');
    expect(page.html).toContain('<section class="card" id="lift">');
    expect(page.html).toContain('An opt-out is the person\'s own choice: it stays until they reply START, UNSTOP or YES.');
    expect(rowOf(page.html, '+14155550104', 'manual')).toContain('href="/suppressed-recipients?lift=%2B14155550104#lift"');
    const prefilled = await owner.client.get('/suppressed-recipients?lift=%2B14155550104#lift');
    expect(prefilled.html).toMatch(/id="lift-phone" name="phone" value="\+14155550104"/);
    const add = await owner.client.get('/suppressed-recipients?add=%2B14155550105');
    expect(add.html).toMatch(/id="add-phone" name="phone" value="\+14155550105"/);
  });
});

describe('the history', () => {
  it('lists opt-outs, opt-backs and manual changes with reason and who, newest first', async () => {
    const page = await compliance.client.get('/suppressed-recipients');
    const table = historyTable(page.html);
    expect(table).toContain('Opted back in by replying START');
    expect(table).toContain('Opted out by replying STOP');
    expect(table).toContain('Suppressed manually');
    expect(table).toContain('Manual suppression lifted');
    expect(table).toContain('Was our patient after all');
    expect(table).toContain('bob@example.test');
    // The opt-back's message is kept and linked; the first opt-out of +14155550107 was purged.
    expect(table).toContain('href="/inbound-logs?id=in-a-107-start"');
    expect(table).toContain('No longer kept (30 days)');
    const order = ['+14155550102', '+14155550107', '+14155550108'].map((r) => table.indexOf(r));
    expect(order).toEqual([...order].sort((a, b) => a - b));
  });
});

describe('filters and pages', () => {
  it('filters by kind, by digits of the number and by day', async () => {
    const manual = await owner.client.get('/suppressed-recipients?source=manual');
    expect(manual.html).toContain('1–50 of 61');
    expect(currentTable(manual.html)).not.toContain('data-source="opt_out"');
    expect(currentTable((await owner.client.get('/suppressed-recipients?source=manual&page=2')).html)).toContain('+14155550104');
    const optOuts = await owner.client.get('/suppressed-recipients?source=opt_out');
    expect(currentTable(optOuts.html)).not.toContain('data-source="manual"');
    expect(optOuts.html).toContain('1–3 of 3');
    expect(historyTable(optOuts.html)).not.toContain('Suppressed manually');

    const phone = await owner.client.get('/suppressed-recipients?phone=%2B1+415+555-0101');
    expect(currentTable(phone.html)).toContain('+14155550101');
    expect(phone.html).toContain('1–1 of 1');

    const day = await owner.client.get('/suppressed-recipients?from=2024-01-10&to=2024-01-10');
    expect(currentTable(day.html)).toContain('+14155550104');
    expect(day.html).toContain('1–1 of 1');
    expect(historyTable(day.html)).toContain('Asked at the desk');
    expect(historyTable(day.html)).not.toContain('Opted back in');
  });

  it('pages through 50 at a time, newest first', async () => {
    const first = await owner.client.get('/suppressed-recipients?phone=1202555');
    expect(first.html).toContain('1–50 of 60');
    expect((currentTable(first.html).match(/<tr data-recipient/g) ?? []).length).toBe(50);
    expect(currentTable(first.html)).toContain('+12025551000');
    expect(first.html).toContain('href="/suppressed-recipients?phone=1202555&amp;page=2#current"');
    const second = await owner.client.get('/suppressed-recipients?phone=1202555&page=2');
    expect(second.html).toContain('51–60 of 60');
    expect(currentTable(second.html)).toContain('+12025551059');
    expect(currentTable(second.html)).not.toContain('+12025551000');
    const beyond = await owner.client.get('/suppressed-recipients?phone=1202555&page=9');
    expect(beyond.status).toBe(200);
    expect(beyond.html).toContain('There is nothing on this page.');
  });

  it('ignores values it does not understand, says so, and never fails', async () => {
    const page = await owner.client.get('/suppressed-recipients?source=all-of-them&phone=robert&from=2026-02-30&page=-1&hpage=abc&page=2');
    expect(page.status).toBe(200);
    expect(page.html).toContain('id="query-problems"');
    expect(page.html).toContain('The source “all-of-them” is not one of the choices; all are shown.');
    expect(page.html).toContain('The phone number search “robert” is not part of a phone number');
    expect(page.html).toContain('The “from” date “2026-02-30” is not a date');
    expect(page.html).toContain('The page was given more than once');
    expect(page.html).toContain('1–50 of 64');
  });
});

describe('the CSV export', () => {
  it('downloads the filtered list with its causes, as an attachment named for the day', async () => {
    const response = await compliance.client.get('/suppressed-recipients.csv?source=opt_out');
    expect(response.status).toBe(200);
    expect(response.response.headers['content-type']).toBe('text/csv; charset=utf-8');
    expect(response.response.headers['content-disposition']).toBe(`attachment; filename="suppressed-recipients-${new Date().toISOString().slice(0, 10)}.csv"`);
    const lines = response.html.split('\r\n');
    expect(lines[0]).toBe('recipient,source,reason,by,since,cause_text,cause_received_at,instance');
    expect(lines).toHaveLength(5);
    expect(lines[lines.length - 1]).toBe('');
    const kept = lines.find((l) => l.startsWith('+14155550101,'))!;
    expect(kept).toMatch(new RegExp(`^\\+14155550101,opt_out,keyword:STOP,recipient,\\d{4}-\\d{2}-\\d{2}T[\\d:.]+Z,STOP please,\\d{4}-\\d{2}-\\d{2}T[\\d:.]+Z,${account.instance_name}$`));
    expect(lines.find((l) => l.startsWith('+14155550103,'))).toMatch(/,recipient,[^,]+,,,demo-/);
    expect(response.html).not.toContain('+14155550999');
  });

  it('holds every row, across batches, each once', async () => {
    const all = await owner.client.get('/suppressed-recipients.csv');
    const recipients = all.html.split('\r\n').slice(1, -1).map((l) => l.split(',')[0]);
    expect(recipients).toHaveLength(64);
    expect(new Set(recipients).size).toBe(64);
    expect(recipients).toContain('+14155550104');
    expect(all.html).not.toContain('other customer');
  });

  it('reads in keyset batches that neither skip nor repeat a row', async () => {
    const read = async (batch: number) => {
      let text = '';
      for await (const chunk of await csvExport(pool(), account.customer_id, parseSuppressionQuery({}), batch)) text += chunk;
      return text;
    };
    const whole = await read(500);
    // Rows of one instant too: the keyset goes on by number and kind.
    expect(await read(7)).toBe(whole);
    expect(await read(1)).toBe(whole);
    expect(whole.split('\r\n')).toHaveLength(66);
  });

  it('refuses filters it does not understand rather than export more than asked', async () => {
    const bad = await owner.client.get('/suppressed-recipients.csv?from=yesterday');
    expect(bad.status).toBe(400);
    expect(bad.html).toContain('Export not started');
  });
});

describe('manual suppressions', () => {
  it('adding appends RecipientSuppressed (manual, with the reason and the member) and comes back with a notice', async () => {
    const added = await owner.client.submit('/suppressed-recipients', '/suppressed-recipients', { phone: '+1 (415) 555-0150', reason: 'Asked by phone not to message' });
    expect(added.status, added.html).toBe(303);
    expect(added.location).toBe('/suppressed-recipients?done=added#current');
    const record = await suite.fixture.record(factFor(account.customer_id, 'RecipientSuppressed', '+14155550150'), 'RecipientSuppressed');
    const fact = JSON.parse((record.event.payload as { payload: string }).payload) as Record<string, unknown>;
    expect(fact).toMatchObject({ type: 'RecipientSuppressed', customerId: account.customer_id, recipient: '+14155550150', source: 'manual', reason: 'Asked by phone not to message', by: owner.email });
    expect(typeof fact.at).toBe('number');
    const after = await owner.client.get(added.location!);
    expect(textOf(after.html, 'notice')).toBe('Added. It applies to sends from now on; the list updates within a few seconds.');
  });

  it('lifting appends RecipientUnsuppressed with the reason', async () => {
    const lifted = await owner.client.submit('/suppressed-recipients', '/suppressed-recipients/remove', { phone: '+14155550104', reason: 'Consent given again in writing' });
    expect(lifted.status, lifted.html).toBe(303);
    expect(lifted.location).toBe('/suppressed-recipients?done=lifted#current');
    const record = await suite.fixture.record(factFor(account.customer_id, 'RecipientUnsuppressed', '+14155550104'), 'RecipientUnsuppressed');
    expect(JSON.parse((record.event.payload as { payload: string }).payload)).toMatchObject({ type: 'RecipientUnsuppressed', recipient: '+14155550104', source: 'manual', by: owner.email, reason: 'Consent given again in writing' });
  });

  it('refuses bad input, an opt-out and a number without a manual suppression, in words, and appends nothing', async () => {
    const cases: Array<[string, Record<string, string>, string]> = [
      ['/suppressed-recipients', { phone: 'not a number', reason: 'x' }, 'is not a phone number in international format'],
      ['/suppressed-recipients', { phone: '+14155550160', reason: '   ' }, 'Write a short reason'],
      ['/suppressed-recipients', { phone: '+14155550160', reason: 'x'.repeat(201) }, 'The reason is longer than 200 characters.'],
      ['/suppressed-recipients', { phone: '+14155550160', reason: 'x'.repeat(2000) }, 'too long'],
      ['/suppressed-recipients', {}, 'Enter the phone number'],
      ['/suppressed-recipients', { phone: '+12025551000', reason: 'again' }, 'is already suppressed manually'],
      ['/suppressed-recipients/remove', { phone: '+14155550101', reason: 'they called us' }, '+14155550101 opted out themselves, so only they can undo it: an opt-out stays until the recipient replies START, UNSTOP or YES. It cannot be lifted here.'],
      ['/suppressed-recipients/remove', { phone: '+14155550160', reason: 'why not' }, '+14155550160 has no manual suppression to lift.'],
      ['/suppressed-recipients/remove', { phone: '+14155550998', reason: 'the other customer\'s' }, '+14155550998 has no manual suppression to lift.'],
      ['/suppressed-recipients/remove', { phone: '+12025551001', reason: '' }, 'Write a short reason'],
      ['/suppressed-recipients/remove', {}, 'Enter the phone number'],
    ];
    for (const [action, fields, message] of cases) {
      const page = await owner.client.submit('/suppressed-recipients', action, fields);
      expect(page.status, `${action} ${JSON.stringify(fields)}`).toBe(400);
      expect(page.html, `${action} ${JSON.stringify(fields)}`).toContain(message);
      expect(page.html).toContain('role="alert"');
    }
    // The form keeps what was typed.
    const kept = await owner.client.submit('/suppressed-recipients', '/suppressed-recipients', { phone: '+14155550160', reason: '' });
    expect(kept.html).toMatch(/id="add-phone" name="phone" value="\+14155550160"/);
    // A fact appended after them arrives; none of the refused ones did before it (one partition per customer).
    expect((await owner.client.submit('/suppressed-recipients', '/suppressed-recipients', { phone: '+14155550161', reason: 'marker' })).status).toBe(303);
    await suite.fixture.record(factFor(account.customer_id, 'RecipientSuppressed', '+14155550161'), 'the marker');
    const appended = suite.fixture.records.filter((r) => r.event.type === 'PolicyInputRecorded' && r.event.payload.customer_id === account.customer_id).map((r) => JSON.parse((r.event.payload as { payload: string }).payload) as { recipient: string });
    for (const refused of ['+14155550160', '+14155550101', '+14155550998', '+12025551001']) expect(appended.map((f) => f.recipient)).not.toContain(refused);
  });

  it('only owners and admins change the list', async () => {
    const page = await compliance.client.submit('/suppressed-recipients', '/suppressed-recipients', { phone: '+14155550170', reason: 'no' });
    expect(page.status).toBe(403);
  });
});

describe('who sees what', () => {
  it('a viewer may not see the page or the export', async () => {
    expect((await viewer.client.get('/suppressed-recipients')).status).toBe(403);
    expect((await viewer.client.get('/suppressed-recipients.csv')).status).toBe(403);
  });

  it('a member of another customer never sees this customer\'s rows, nor this one theirs', async () => {
    const theirs = await stranger.client.get('/suppressed-recipients');
    expect(theirs.status).toBe(200);
    expect(theirs.html).toContain('+14155550999');
    expect(theirs.html).toContain('STOP from the other customer');
    for (const mine of ['+14155550101', '+14155550104', 'STOP please', 'Asked at the desk', '+14155550107', '+12025551000']) expect(theirs.html).not.toContain(mine);
    const csv = await stranger.client.get('/suppressed-recipients.csv');
    expect(csv.html.split('\r\n').slice(1, -1).map((l) => l.split(',')[0]).sort()).toEqual(['+14155550998', '+14155550999']);
    const ours = await owner.client.get('/suppressed-recipients?phone=41555509');
    expect(ours.html).not.toContain('+14155550999');
    expect(ours.html).not.toContain('other customer');
  });
});

describe('senders known by a linked id (@lid)', () => {
  it('shows a linked id plainly until its number is known, then the number, carried over from it', async () => {
    const mine = await suite.fixture.account();
    const reader = await memberWithRole(app(), pool(), suite.fixture.box, mine.customer_id, 'compliance');
    const c = mine.customer_id;
    const lid = '123456789012345@lid';
    await optOut(c, mine.instance_id, lid, 'in-lid-1', 'STOP', minutesAgo(10));
    const before = await reader.client.get('/suppressed-recipients');
    expect(before.status, before.html).toBe(200);
    expect(rowOf(before.html, lid, 'opt_out')).toContain('Linked id 1234…@lid, number not known yet');

    // The policy consumer learned the number: it wrote the number's rows, carried over from the linked id.
    await pool().query(sql.typeAlias('void')`
      INSERT INTO suppression_history (customer_id, recipient, action, source, reason, created_by, at, linked_from)
      VALUES (${c}, '+14155550301', 'suppressed', 'opt_out', 'keyword:STOP', 'recipient', ${minutesAgo(10).toISOString()}::timestamptz, ${lid})`);
    await suppression(c, { recipient: '+14155550301', source: 'opt_out', reason: 'keyword:STOP', by: 'recipient', at: minutesAgo(10) });
    const after = await reader.client.get('/suppressed-recipients');
    expect(rowOf(after.html, lid, 'opt_out')).toContain('Linked id 1234…@lid, number +14155550301');
    const number = rowOf(after.html, '+14155550301', 'opt_out');
    expect(number).toContain('Opted out as Linked id 1234…@lid; the number was learned later.');
    expect(historyTable(after.html)).toContain('carried over from Linked id 1234…@lid, the same person');
  });
});
