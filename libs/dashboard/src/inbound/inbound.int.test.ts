import { beforeAll, describe, expect, it } from 'vitest';
import { sql } from '@gw/db';
import type { TestAccount } from '../../../../test/support/api/api-fixture.ts';
import { useApiFixture } from '../../../../test/support/api/api-fixture.ts';
import { memberWithRole, type TestMember } from '../../../../test/support/dashboard/members.ts';

// /inbound-logs: the customer's received messages as the instance-events consumer writes them
// (inserted here, as it does not run in this fixture): flags, search, filters, newer/older pages,
// one message by id, and nothing of another customer's.
const suite = useApiFixture();
const app = () => suite.fixture.app;
const pool = () => suite.fixture.runtime.pool;

let account: TestAccount;
let other: TestAccount;
let owner: TestMember;
let compliance: TestMember;
let viewer: TestMember;
let stranger: TestMember;
const SECOND_INSTANCE = 'ins_inbound_second_000000000';

const minutesAgo = (m: number) => new Date(Date.now() - m * 60_000);

interface Inbound {
  id: string;
  sender: string | null;
  text: string;
  opt?: 'opt_out' | 'opt_in' | 'flagged' | null;
  chat?: 'direct' | 'group';
  group?: string;
  at: Date;
  instanceId?: string;
}

async function inbound(customerId: string, instanceId: string, row: Inbound) {
  await pool().query(sql.typeAlias('void')`
    INSERT INTO inbound_messages (id, customer_id, instance_id, chat, sender, group_id, message_text, message_type, opt_action, received_at)
    VALUES (${row.id}, ${customerId}, ${row.instanceId ?? instanceId}, ${row.chat ?? 'direct'}, ${row.sender}, ${row.group ?? null}, ${row.text}, 'conversation', ${row.opt ?? null}, ${row.at.toISOString()}::timestamptz)`);
}

const listOf = (html: string) => /<table id="inbound-list"[^>]*>[\s\S]*?<\/table>/.exec(html)?.[0] ?? '';
const rowOf = (html: string, id: string) => new RegExp(`<tr id="inbound-${id}"[\\s\\S]*?</tr>`).exec(html)?.[0] ?? '';
const idsOf = (html: string) => [...listOf(html).matchAll(/<tr id="inbound-([^"]+)"/g)].map((m) => m[1]!);
const linkOf = (html: string, rel: 'prev' | 'next') => new RegExp(`<a href="([^"]+)" rel="${rel}">`).exec(html)?.[1]?.replace(/&amp;/g, '&') ?? null;

beforeAll(async () => {
  account = await suite.fixture.account();
  other = await suite.fixture.account();
  const c = account.customer_id;
  const i = account.instance_id;
  owner = await memberWithRole(app(), pool(), suite.fixture.box, c, 'owner');
  compliance = await memberWithRole(app(), pool(), suite.fixture.box, c, 'compliance');
  viewer = await memberWithRole(app(), pool(), suite.fixture.box, c, 'viewer');
  stranger = await memberWithRole(app(), pool(), suite.fixture.box, other.customer_id, 'owner');
  // A second instance of the customer, deleted since: its messages stay in the log under its name.
  await pool().query(sql.typeAlias('void')`
    INSERT INTO instances (id, customer_id, name, manager_url, manager_instance, manager_api_key_enc, deleted_at)
    VALUES (${SECOND_INSTANCE}, ${c}, 'old-reception', 'http://127.0.0.1:9', 'old-reception', 'unused', now())`);

  await inbound(c, i, { id: 'in-stop', sender: '+14155550101', text: 'STOP', opt: 'opt_out', at: minutesAgo(1) });
  await inbound(c, i, { id: 'in-start', sender: '+14155550102', text: 'START', opt: 'opt_in', at: minutesAgo(2) });
  await inbound(c, i, { id: 'in-flag-open', sender: '+14155550105', text: 'Please don\'t text me anymore', opt: 'flagged', at: minutesAgo(3) });
  await inbound(c, i, { id: 'in-flag-done', sender: '+14155550104', text: 'take me off your list', opt: 'flagged', at: minutesAgo(4) });
  await inbound(c, i, { id: 'in-group', sender: '+14155550106', text: 'Team: 100%_done <b>bold</b>', chat: 'group', group: '120363000000000001', at: minutesAgo(5) });
  await inbound(c, i, { id: 'in-old-instance', sender: '+14155550107', text: 'sent to the old number', at: minutesAgo(6), instanceId: SECOND_INSTANCE });
  await inbound(c, i, { id: 'in-dated', sender: '+14155550108', text: 'a message from long ago', at: new Date('2024-01-10T10:00:00Z') });
  // Sixty routine ones, for the pages (two at each instant: the id orders them).
  const base = Date.now();
  for (let n = 0; n < 60; n++) await inbound(c, i, { id: `in-routine-${String(n).padStart(2, '0')}`, sender: '+12025550000', text: `routine message ${n}`, at: new Date(base - (100 + Math.floor(n / 2)) * 60_000) });
  // +14155550104 is suppressed (manually): its flagged message needs no action.
  await pool().query(sql.typeAlias('void')`
    INSERT INTO suppressions (customer_id, recipient, source, reason, created_by, created_at) VALUES (${c}, '+14155550104', 'manual', 'asked', 'ann@example.test', now())`);

  await inbound(other.customer_id, other.instance_id, { id: 'in-theirs', sender: '+14155550999', text: 'the other customer\'s secret', opt: 'flagged', at: minutesAgo(1) });
}, 180_000);

describe('the log', () => {
  it('lists received messages newest first: time, instance, chat, sender, text and the flag; with the retention', async () => {
    const page = await compliance.client.get('/inbound-logs');
    expect(page.status, page.html).toBe(200);
    expect(page.html).toContain('Messages are kept for 30 days, then deleted automatically.');
    expect(idsOf(page.html).slice(0, 6)).toEqual(['in-stop', 'in-start', 'in-flag-open', 'in-flag-done', 'in-group', 'in-old-instance']);
    const stop = rowOf(page.html, 'in-stop');
    expect(stop).toContain(`on <span class="instance">${account.instance_name}</span>`);
    expect(stop).toContain('<span class="hint chat">1:1</span>');
    expect(stop).toContain('+14155550101');
    expect(stop).toContain('Opted out (keyword)');
    expect(stop).toContain('href="/suppressed-recipients?phone=14155550101#current"');
    expect(rowOf(page.html, 'in-start')).toContain('Opted back in');
    const group = rowOf(page.html, 'in-group');
    expect(group).toContain('Group 120363000000000001');
    // Texts are escaped.
    expect(group).toContain('Team: 100%_done &lt;b&gt;bold&lt;/b&gt;');
    expect(rowOf(page.html, 'in-old-instance')).toContain('<span class="instance">old-reception (deleted)</span>');
    expect(idsOf(page.html)).toHaveLength(50);
  });

  it('makes a flagged message stand out; those who may suppress get the form filled in, unless the number is suppressed already', async () => {
    const page = await owner.client.get('/inbound-logs');
    const open = rowOf(page.html, 'in-flag-open');
    expect(open).toMatch(/^<tr id="inbound-in-flag-open" class="flagged"/);
    expect(open).toContain('Possible opt-out request — review');
    expect(open).toContain('href="/suppressed-recipients?add=%2B14155550105#add"');
    const done = rowOf(page.html, 'in-flag-done');
    expect(done).toContain('The number is suppressed.');
    expect(done).not.toContain('?add=');
    // Compliance reads, but does not manage suppressions: no offer.
    expect(rowOf((await compliance.client.get('/inbound-logs')).html, 'in-flag-open')).not.toContain('?add=');
  });
});

describe('search and filters', () => {
  it('"flagged only"', async () => {
    const page = await owner.client.get('/inbound-logs?flag=flagged');
    expect(idsOf(page.html)).toEqual(['in-flag-open', 'in-flag-done']);
    expect(page.html).toContain('<option value="flagged" selected>');
  });

  it('free text over the sender and the text, with the wildcards taken literally', async () => {
    expect(idsOf((await owner.client.get('/inbound-logs?q=TEXT+ME')).html)).toEqual(['in-flag-open']);
    // A number as people write it finds the sender by its digits.
    expect(idsOf((await owner.client.get('/inbound-logs?q=%2B1+(415)+555-0105')).html)).toEqual(['in-flag-open']);
    expect(idsOf((await owner.client.get('/inbound-logs?q=4155550105')).html)).toEqual(['in-flag-open']);
    expect(idsOf((await owner.client.get('/inbound-logs?q=100%25_')).html)).toEqual(['in-group']);
    expect(idsOf((await owner.client.get('/inbound-logs?q=_')).html)).toEqual(['in-group']);
    expect(idsOf((await owner.client.get('/inbound-logs?q=%25')).html)).toEqual(['in-group']);
  });

  it('by instance, chat kind, flag and day', async () => {
    expect(idsOf((await owner.client.get(`/inbound-logs?instance=${SECOND_INSTANCE}`)).html)).toEqual(['in-old-instance']);
    expect(idsOf((await owner.client.get('/inbound-logs?chat=group')).html)).toEqual(['in-group']);
    expect(idsOf((await owner.client.get('/inbound-logs?flag=opt_in')).html)).toEqual(['in-start']);
    expect(idsOf((await owner.client.get('/inbound-logs?from=2024-01-10&to=2024-01-10')).html)).toEqual(['in-dated']);
    expect(idsOf((await owner.client.get('/inbound-logs?q=nothing+says+this')).html)).toEqual([]);
    expect((await owner.client.get('/inbound-logs?q=nothing+says+this')).html).toContain('No message matches this search.');
  });

  it('ignores what it does not understand, says so, and never fails', async () => {
    const page = await owner.client.get(`/inbound-logs?instance=${other.instance_id}&chat=fax&flag=maybe&from=2026-02-30&before=not-a-page&q=%00`);
    expect(page.status).toBe(200);
    expect(page.html).toContain('id="query-problems"');
    expect(page.html).toContain('The instance chosen is not one of yours');
    expect(page.html).toContain('The page asked for is not understood');
    expect(idsOf(page.html)[0]).toBe('in-stop');
    expect(page.html).not.toContain('the other customer');
  });
});

describe('pages', () => {
  it('goes older and newer 50 at a time, keeping the filters, without skipping or repeating', async () => {
    const first = await owner.client.get('/inbound-logs?q=routine');
    const firstIds = idsOf(first.html);
    expect(firstIds).toHaveLength(50);
    expect(linkOf(first.html, 'prev')).toBeNull();
    const older = linkOf(first.html, 'next')!;
    expect(older).toMatch(/^\/inbound-logs\?q=routine&before=/);
    const second = await owner.client.get(older);
    const secondIds = idsOf(second.html);
    expect(secondIds).toHaveLength(10);
    expect(new Set([...firstIds, ...secondIds]).size).toBe(60);
    expect(linkOf(second.html, 'next')).toBeNull();
    expect(second.html).toContain('>Newest</a>');
    const back = await owner.client.get(linkOf(second.html, 'prev')!);
    expect(idsOf(back.html)).toEqual(firstIds);
    expect(linkOf(back.html, 'prev')).toBeNull();
    expect(linkOf(back.html, 'next')).toBe(older);
  });
});

describe('one message by id', () => {
  it('shows the customer\'s own message', async () => {
    const page = await owner.client.get('/inbound-logs?id=in-flag-open');
    expect(page.status).toBe(200);
    expect(idsOf(page.html)).toEqual(['in-flag-open']);
    expect(page.html).toContain('All inbound messages');
  });

  it('shows nothing of another customer\'s message, as for an unknown id (404)', async () => {
    for (const url of ['/inbound-logs?id=in-theirs', '/inbound-logs?id=no-such-message']) {
      const page = await owner.client.get(url);
      expect(page.status).toBe(404);
      expect(page.html).toContain('No such message');
      expect(page.html).not.toContain('the other customer');
      expect(page.html).not.toContain('+14155550999');
    }
  });
});

describe('who sees what', () => {
  it('a viewer may not see the log', async () => {
    expect((await viewer.client.get('/inbound-logs')).status).toBe(403);
  });

  it('a member of another customer sees only theirs', async () => {
    const page = await stranger.client.get('/inbound-logs');
    expect(idsOf(page.html)).toEqual(['in-theirs']);
    expect(page.html).not.toContain(account.instance_name);
    expect(page.html).not.toContain('old-reception');
    expect((await stranger.client.get('/inbound-logs?id=in-stop')).status).toBe(404);
  });
});
