import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CSV_COLUMNS, type CustomerVerifyReport } from '@gw/compliance';
import { sql, z } from '@gw/db';
import type { SendDecided } from '@gw/events';
import { KafkaInspector } from '@gw/kafka';
import { insertEntries } from '@gw/policy-log';
import { until, useApiFixture, type TestAccount } from '../../../../test/support/api/api-fixture.ts';
import { memberWithRole, type TestMember } from '../../../../test/support/dashboard/members.ts';
import { field, textOf } from '../../../../test/support/dashboard/page-client.ts';
// The policy consumer itself, reached by path as other services' int tests do: the sends below are
// decided by the real decider, so the log has real chains (Postgres and the decisions topic) and
// "verify my log" has a real replay to run.
import { startPolicyService } from '../../../../services/policy/src/service.ts';
import { parseCsv } from '../../../../test/support/csv.ts';

// /policy-log, its export and "verify my log", in-process over real Kafka, registry and Postgres.
// Real sends of two customers go through POST /api/send-message and the policy consumer (started
// here). The topics have one partition, so both customers' entries interleave in one chain, as on a
// busy partition: the customer's verification must check through the other's entries and name none.
const partitionsBefore = process.env.TOPIC_PARTITIONS;
process.env.TOPIC_PARTITIONS = '1';
const suite = useApiFixture();
const app = () => suite.fixture.app;
const pool = () => suite.fixture.runtime.pool;

let mine: TestAccount;
let theirs: TestAccount;
let many: TestAccount;
let owner: TestMember;
let admin: TestMember;
let compliance: TestMember;
let developer: TestMember;
let viewer: TestMember;
let theirCompliance: TestMember;
let manyCompliance: TestMember;

const SUPPRESSED = '+14155550999';
const MARKETING = 'Flash sale! 20% off everything this weekend only, buy now';

const Entry = z.object({
  log_id: z.number(),
  command_id: z.string(),
  customer_id: z.string(),
  message_id: z.string(),
  recipient: z.string(),
  decision: z.string(),
  error_code: z.string().nullable(),
  message_purpose: z.string(),
  decided_at: z.date(),
});
type Entry = z.infer<typeof Entry>;
/** The customer's entries, newest first (the page's order). */
const entriesOf = (customerId: string) =>
  pool().any(sql.type(Entry)`SELECT log_id, command_id, customer_id, message_id, recipient, decision, error_code, message_purpose, decided_at FROM policy_log WHERE customer_id = ${customerId} ORDER BY decided_at DESC, log_id DESC`);
let myEntries: readonly Entry[] = [];
let theirEntries: readonly Entry[] = [];

async function send(account: TestAccount, phone: string, purpose: string, message: string): Promise<void> {
  const response = await app().inject({
    method: 'POST',
    url: '/api/send-message',
    headers: { authorization: `Bearer ${account.api_key}`, 'content-type': 'application/json' },
    payload: JSON.stringify({ instance_id: account.instance_id, phone, message, message_purpose: purpose }),
  });
  // The reply router is a fake that never answers: the command is appended and the API answers "pending".
  expect(response.json(), response.body).toMatchObject({ details: { state: 'pending_decision' } });
}

const Count = z.object({ n: z.number() });

beforeAll(async () => {
  // The fixture's runtime has read its configuration: later files get the default again.
  if (partitionsBefore === undefined) delete process.env.TOPIC_PARTITIONS;
  else process.env.TOPIC_PARTITIONS = partitionsBefore;
  const { fixture } = suite;
  await startPolicyService(fixture.runtime);
  mine = await fixture.account();
  theirs = await fixture.account();
  many = await fixture.account();
  const member = (account: TestAccount, role: Parameters<typeof memberWithRole>[4]) => memberWithRole(app(), pool(), fixture.box, account.customer_id, role);
  owner = await member(mine, 'owner');
  admin = await member(mine, 'admin');
  compliance = await member(mine, 'compliance');
  developer = await member(mine, 'developer');
  viewer = await member(mine, 'viewer');
  theirCompliance = await member(theirs, 'compliance');
  manyCompliance = await member(many, 'compliance');

  // A suppression through the dashboard's own form (a RecipientSuppressed fact the consumer folds before the send after it).
  const suppressed = await owner.client.submit('/suppressed-recipients', '/suppressed-recipients', { phone: SUPPRESSED, reason: 'asked us to stop' });
  expect(suppressed.status).toBe(303);

  // Interleaved on the one partition: mine, theirs, mine, theirs, mine, mine, mine.
  await send(mine, '+14155550101', 'transactional', 'Your appointment is on Tuesday at 10:00.');
  await send(theirs, '+14155550201', 'transactional', 'Your results are ready.');
  await send(mine, '+14155550102', 'operational', 'The clinic is closed on Friday.');
  await send(theirs, '+14155550101', 'support', 'Replying to your question.');
  await send(mine, '+14155550103', 'support', 'We received your message.');
  await send(mine, SUPPRESSED, 'transactional', 'Your appointment is tomorrow.');
  await send(mine, '+14155550104', 'transactional', MARKETING);
  await until(async () => (await pool().oneFirst(sql.type(Count)`SELECT count(*) AS n FROM policy_log`)) === 7, 60_000, 'the seven sends to be decided');
  // ... and committed by the policy consumer (a command past its committed offset is "pending", not checked).
  const { runtime } = fixture;
  const inspector = new KafkaInspector(runtime.config.kafkaBrokers, runtime.config.topicPrefix);
  const topic = runtime.topics.name('customerEvents');
  await until(
    async () => {
      const [ends, committed] = await Promise.all([inspector.endOffsets(topic), inspector.committedOffsets(runtime.topics.group('policy'), topic)]);
      return [...ends.values()].every((r) => committed.get(r.partition) === r.end);
    },
    30_000,
    'the policy consumer to commit',
  );
  myEntries = await entriesOf(mine.customer_id);
  theirEntries = await entriesOf(theirs.customer_id);

  // Sixty entries of a third customer, inserted as the consumer writes them (a chain of their own), for the pages.
  const rows: SendDecided[] = Array.from({ length: 60 }, (_, i) => ({
    event_id: `evt_many_${i}`,
    correlation_id: `cmd_many_${i}`,
    occurred_at: Date.now() - (60 - i) * 60_000,
    customer_id: many.customer_id,
    instance_id: many.instance_id,
    message_id: `msg_many_${i}`,
    log_id: 900_000 + i,
    decision: 'accepted',
    error_code: null,
    error_message: null,
    reasons: [],
    policy_version: 'v-many',
    recipient: '+14155557000',
    message_purpose: 'transactional',
    message_digest: 'digest',
    dispatch: null,
    partition_chain: 42,
    prev_hash: '',
    entry_hash: `hash_${i}`,
  }));
  await insertEntries(pool(), rows);
}, 180_000);

afterAll(() => {
  if (partitionsBefore === undefined) delete process.env.TOPIC_PARTITIONS;
  else process.env.TOPIC_PARTITIONS = partitionsBefore;
});

/** The log ids of the rows on a policy-log page, in order. */
const listed = (html: string) => [...html.matchAll(/<tr data-log-id="(\d+)">/g)].map((m) => Number(m[1]));
const ids = (entries: readonly Entry[]) => entries.map((e) => e.log_id);

const VERIFY = '/policy-log/verify-report';

/** Starts a verification as the policy log page's button does: a POST with the page's CSRF token. */
const startVerify = (member: TestMember) => member.client.submit('/policy-log', VERIFY, {});

async function verifyReport(member: TestMember): Promise<CustomerVerifyReport> {
  const page = await startVerify(member);
  expect(page.status, page.html.slice(0, 500)).toBe(200);
  expect(page.response.headers['content-type']).toBe('application/json; charset=utf-8');
  expect(page.response.headers['content-disposition']).toMatch(/^attachment; filename="policy-log-verification-\d{4}-\d{2}-\d{2}-\d{6}Z\.json"$/);
  return JSON.parse(page.html) as CustomerVerifyReport;
}

describe('the policy log page', () => {
  it('lists the customer\'s entries newest first with their count, each linking to its message, and no one else\'s', async () => {
    expect(myEntries).toHaveLength(5);
    expect(theirEntries).toHaveLength(2);
    // The real decider refused the suppressed recipient and the promotional text.
    expect(myEntries.filter((e) => e.decision === 'rejected').map((e) => e.error_code).sort()).toEqual(['policy_violation', 'recipient_suppressed']);
    const page = await compliance.client.get('/policy-log');
    expect(page.status).toBe(200);
    expect(listed(page.html)).toEqual(ids(myEntries));
    expect(textOf(page.html, 'entries-count')).toBe('1–5 of 5 entries, newest first');
    for (const e of myEntries) expect(page.html).toContain(`href="/messages/${e.message_id}"`);
    for (const e of theirEntries) {
      expect(page.html).not.toContain(e.message_id);
      expect(listed(page.html)).not.toContain(e.log_id);
    }
    expect(page.html).not.toContain('+14155550201');
    expect(page.html).toContain('src="/assets/export-progress.js"');
    // The other customer sees theirs only.
    const other = await theirCompliance.client.get('/policy-log');
    expect(listed(other.html)).toEqual(ids(theirEntries));
  });

  it('filters by decision, refusal code, purpose, instance, recipient and time, and keeps the count to the filter', async () => {
    const show = async (query: string) => {
      const page = await compliance.client.get(`/policy-log?${query}`);
      expect(page.status).toBe(200);
      return { rows: listed(page.html), count: textOf(page.html, 'entries-count'), html: page.html };
    };
    const where = (match: (e: Entry) => boolean) => ids(myEntries.filter(match));
    expect((await show('decision=refused')).rows).toEqual(where((e) => e.decision === 'rejected'));
    expect((await show('decision=accepted')).count).toBe('1–3 of 3 entries matching the filters, newest first');
    expect((await show('code=recipient_suppressed')).rows).toEqual(where((e) => e.error_code === 'recipient_suppressed'));
    expect((await show('purpose=operational')).rows).toEqual(where((e) => e.message_purpose === 'operational'));
    expect((await show(`instance=${mine.instance_id}`)).rows).toEqual(ids(myEntries));
    // Both customers sent to this number: only the customer's own entry.
    expect((await show('recipient=555-0101')).rows).toEqual(where((e) => e.recipient === '+14155550101'));
    expect((await show('decision=accepted&purpose=transactional&recipient=0101')).rows).toEqual(where((e) => e.recipient === '+14155550101'));
    const today = new Date().toISOString().slice(0, 10);
    const tomorrow = new Date(Date.now() + 86_400_000).toISOString().slice(0, 10);
    expect((await show(`from=${today}&to=${today}`)).rows).toEqual(ids(myEntries));
    const none = await show(`from=${tomorrow}`);
    expect(none.rows).toEqual([]);
    expect(none.html).toContain('No entry matches these filters.');
    // Another customer's instance is no filter of this customer's: named, ignored.
    const foreign = await show(`instance=${theirs.instance_id}`);
    expect(foreign.rows).toEqual(ids(myEntries));
    expect(textOf(foreign.html, 'query-problems')).toContain('Part of the search was not understood:');
    expect(foreign.html).toContain(`The instance “${theirs.instance_id}” is not one of your instances; it is ignored.`);
    expect(foreign.html).toContain('id="export-blocked"');
  });

  it('pages by 50, with newer and older links that keep the filters', async () => {
    const first = await manyCompliance.client.get('/policy-log?purpose=transactional');
    expect(listed(first.html)).toEqual(Array.from({ length: 50 }, (_, i) => 900_059 - i));
    expect(textOf(first.html, 'entries-count')).toBe('1–50 of 60 entries matching the filters, newest first');
    expect(first.html).toContain('href="/policy-log?purpose=transactional&amp;page=2#entries"');
    const second = await manyCompliance.client.get('/policy-log?purpose=transactional&page=2');
    expect(listed(second.html)).toEqual(Array.from({ length: 10 }, (_, i) => 900_009 - i));
    expect(textOf(second.html, 'entries-count')).toBe('51–60 of 60 entries matching the filters, newest first');
    expect(second.html).toContain('href="/policy-log?purpose=transactional#entries"');
    const beyond = await manyCompliance.client.get('/policy-log?page=9');
    expect(beyond.html).toContain('There is nothing on this page.');
  });
});

describe('the export', () => {
  it('streams CSV with the download headers and the total, oldest first, the customer\'s entries only', async () => {
    const page = await compliance.client.get('/policy-log/export?format=csv');
    expect(page.status).toBe(200);
    const headers = page.response.headers;
    expect(headers['content-type']).toBe('text/csv; charset=utf-8');
    expect(headers['content-disposition']).toMatch(/^attachment; filename="policy-log-\d{4}-\d{2}-\d{2}-\d{6}Z\.csv"$/);
    expect(headers['x-total-entries']).toBe('5');
    expect(headers['cache-control']).toBe('no-store');
    const rows = parseCsv(page.html);
    expect(rows[0]).toEqual([...CSV_COLUMNS]);
    const records = rows.slice(1).map((r) => Object.fromEntries(CSV_COLUMNS.map((c, i) => [c, r[i]!])));
    expect(records.map((r) => Number(r.log_id))).toEqual([...ids(myEntries)].sort((a, b) => a - b));
    expect(new Set(records.map((r) => r.customer_id))).toEqual(new Set([mine.customer_id]));
    const refused = records.find((r) => r.error_code === 'recipient_suppressed')!;
    expect(refused).toMatchObject({ recipient: SUPPRESSED, decision: 'rejected' });
    expect(JSON.parse(refused.reasons!).find((r: { outcome: string }) => r.outcome === 'fail')).toMatchObject({ rule: expect.any(String) });
    expect(refused.entry_hash).toMatch(/^[0-9a-f]{64}$/);

    const filtered = await compliance.client.get('/policy-log/export?format=csv&decision=refused');
    expect(filtered.response.headers['x-total-entries']).toBe('2');
    expect(parseCsv(filtered.html).slice(1).map((r) => Number(r[0]))).toEqual(ids(myEntries.filter((e) => e.decision === 'rejected')).sort((a, b) => a - b));
  });

  it('streams NDJSON, one entry a line, with the same content as the CSV', async () => {
    const page = await compliance.client.get('/policy-log/export?format=ndjson&purpose=transactional');
    expect(page.status).toBe(200);
    expect(page.response.headers['content-type']).toBe('application/x-ndjson; charset=utf-8');
    expect(page.response.headers['content-disposition']).toMatch(/^attachment; filename="policy-log-[\dZ-]+\.ndjson"$/);
    const lines = page.html.trim().split('\n').map((l) => JSON.parse(l));
    const expected = myEntries.filter((e) => e.message_purpose === 'transactional');
    expect(page.response.headers['x-total-entries']).toBe(String(expected.length));
    expect(lines.map((l) => l.log_id)).toEqual(ids(expected).sort((a, b) => a - b));
    for (const line of lines) {
      expect(line).toMatchObject({ customer_id: mine.customer_id, message_purpose: 'transactional', prev_hash: expect.stringMatching(/^[0-9a-f]{64}$/) });
      expect(Array.isArray(line.reasons)).toBe(true);
    }
    const csv = parseCsv((await compliance.client.get('/policy-log/export?format=csv&purpose=transactional')).html).slice(1);
    expect(csv.map((r) => JSON.parse(r[CSV_COLUMNS.indexOf('reasons')]!))).toEqual(lines.map((l) => l.reasons));
  });

  it('holds none of another customer\'s entries, whatever the filter', async () => {
    const texts = [
      (await compliance.client.get('/policy-log/export?format=ndjson')).html,
      (await compliance.client.get('/policy-log/export?format=csv&recipient=0101')).html,
    ];
    for (const text of texts) {
      expect(text).not.toContain(theirs.customer_id);
      for (const e of theirEntries) {
        expect(text).not.toContain(e.message_id);
        expect(text).not.toContain(e.command_id);
      }
      expect(text).not.toContain('+14155550201');
    }
    const other = await theirCompliance.client.get('/policy-log/export?format=ndjson');
    expect(other.response.headers['x-total-entries']).toBe('2');
    expect(other.html.trim().split('\n').map((l) => JSON.parse(l).customer_id)).toEqual([theirs.customer_id, theirs.customer_id]);
  });

  it('refuses, with a page that says why, a format it does not write and filters it does not understand', async () => {
    for (const [url, words] of [
      ['/policy-log/export', 'Choose the file’s format'],
      ['/policy-log/export?format=xlsx', 'Choose the file’s format'],
      ['/policy-log/export?format=csv&from=yesterday', 'The “from” time “yesterday” is not a date and time'],
      [`/policy-log/export?format=csv&instance=${theirs.instance_id}`, 'is not one of your instances'],
    ] as const) {
      const page = await compliance.client.get(url);
      expect(page.status, url).toBe(400);
      expect(page.response.headers['content-type']).toMatch(/^text\/html/);
      expect(page.html).toContain(words);
      expect(page.response.headers['x-total-entries']).toBeUndefined();
    }
  });
});

describe('verify my log', () => {
  it('reports an intact log: the customer\'s counts, checked through the other customer\'s entries, naming none of them', async () => {
    const report = await verifyReport(compliance);
    expect(report).toMatchObject({
      ok: true,
      customer_id: mine.customer_id,
      counts: { entries: 5, replayed_decisions: 5, divergences: 0, pending_decisions: 0, chains: 1, chain_entries: 7, other_problems: 0 },
      divergences: [],
    });
    expect(report.policy_versions).toHaveLength(1);
    expect(Date.now() - Date.parse(report.checked_at)).toBeLessThan(120_000);
    expect(report.summary).toMatch(/^Your policy log checks out\. All 5 entries are unchanged, and the chain is intact through your entries \(7 entries checked in 1 chain\)\. Deciding your 5 sends again gave the same decisions as recorded\.$/);
    const text = JSON.stringify(report);
    expect(text).not.toContain(theirs.customer_id);
    for (const e of theirEntries) {
      expect(text).not.toContain(e.message_id);
      expect(text).not.toContain(e.command_id);
    }
    expect((await verifyReport(theirCompliance)).counts).toMatchObject({ entries: 2, replayed_decisions: 2, chain_entries: 7 });
  });

  it('runs one verification per customer at a time: a second one at once gets a 429 page, and the status page says one runs', async () => {
    const csrf = async (member: TestMember) => field((await member.client.get('/policy-log')).html, '_csrf')!;
    const [mineToken, ownerToken] = [await csrf(compliance), await csrf(owner)];
    const first = compliance.client.post(VERIFY, { _csrf: mineToken });
    const second = owner.client.post(VERIFY, { _csrf: ownerToken });
    // Meanwhile the status page (read by another member of the customer) says one is running.
    let settled = false;
    void Promise.allSettled([first, second]).then(() => (settled = true));
    let during = await admin.client.get(VERIFY);
    while (!settled && !during.html.includes('A verification of your log is running</strong>')) during = await admin.client.get(VERIFY);
    const [a, b] = await Promise.all([first, second]);
    const statuses = [a.status, b.status].sort();
    expect(statuses).toEqual([200, 429]);
    const refused = a.status === 429 ? a : b;
    expect(refused.response.headers['content-type']).toMatch(/^text\/html/);
    expect(refused.html).toContain('A verification of your log is already running');
    expect(textOf(during.html, 'verify-status')).toContain('A verification of your log is running');
    expect(during.html).not.toContain('id="verify-form"');
    // Once it is done, the next one runs.
    expect((await startVerify(compliance)).status).toBe(200);
  });

  it('starts only from a POST with the CSRF token: the GET is a status page that starts nothing and shows the last result', async () => {
    // A plain navigation (a link, a prefetch, a crawler with the session) gets the status page.
    const page = await compliance.client.get(VERIFY);
    expect(page.status).toBe(200);
    expect(page.response.headers['content-type']).toMatch(/^text\/html/);
    expect(page.response.headers['content-disposition']).toBeUndefined();
    expect(textOf(page.html, 'verify-status')).toBe('No verification of your log is running.');
    // The earlier tests' last run, as this process saw it, and the button for the next one.
    expect(textOf(page.html, 'verify-verdict')).toBe('Intact');
    expect(textOf(page.html, 'verify-summary')).toMatch(/^Your policy log checks out\./);
    expect(page.html).toContain(`<form method="post" action="${VERIFY}" id="verify-form"`);
    expect(field(page.html, '_csrf')).toBeTruthy();
    // The other customer's page knows nothing of this customer's runs.
    expect(textOf((await manyCompliance.client.get(VERIFY)).html, 'verify-last')).toContain('No result to show');
    // A POST without the page's token is refused, and starts nothing.
    const forged = await compliance.client.post(VERIFY, {});
    expect(forged.status).toBe(403);
    expect(forged.response.headers['content-disposition']).toBeUndefined();
  });

  it('reports a tampered entry of the customer by log id, check and field; the other customer learns only a count', async () => {
    const victim = myEntries.find((e) => e.recipient === '+14155550102')!;
    await pool().query(sql.typeAlias('void')`UPDATE policy_log SET recipient = '+14155550000' WHERE log_id = ${victim.log_id}`);
    try {
      const report = await verifyReport(compliance);
      expect(report.ok).toBe(false);
      expect(new Set(report.divergences.map((d) => d.log_id))).toEqual(new Set([victim.log_id]));
      expect(report.divergences).toContainEqual(expect.objectContaining({ log_id: victim.log_id, check: 'db_event', field: 'recipient' }));
      expect(report.divergences).toContainEqual(expect.objectContaining({ log_id: victim.log_id, check: 'kafka_vs_db', field: 'recipient' }));
      expect(report.divergences).toContainEqual(expect.objectContaining({ log_id: victim.log_id, check: 'db_hash', field: 'entry_hash' }));
      expect(report.counts).toMatchObject({ divergences: report.divergences.length, other_problems: 0 });
      expect(report.summary).toMatch(/^Problems found: \d+ problems in your entries/);
      for (const d of report.divergences) expect(Object.keys(d).sort()).toEqual(['check', 'field', 'log_id', 'meaning']);

      // The other customer's chain runs through the tampered entry: not intact, but nothing of it is named.
      const theirsReport = await verifyReport(theirCompliance);
      expect(theirsReport.ok).toBe(false);
      expect(theirsReport.divergences).toEqual([]);
      expect(theirsReport.counts).toMatchObject({ divergences: 0, other_problems: report.divergences.length });
      expect(theirsReport.summary).toMatch(/^Your own entries check out, but the chain through them is not intact/);
      const text = JSON.stringify(theirsReport);
      expect(text).not.toContain(mine.customer_id);
      expect(text).not.toContain('+14155550000');
      expect(text).not.toContain(victim.message_id);
      expect(text).not.toContain(`"log_id":${victim.log_id}`);
    } finally {
      await pool().query(sql.typeAlias('void')`UPDATE policy_log SET recipient = ${victim.recipient} WHERE log_id = ${victim.log_id}`);
    }
    expect((await verifyReport(compliance)).ok).toBe(true);
  });
});

describe('who may see it', () => {
  it('refuses a viewer and a developer the page, the export and the report; owners, admins and compliance read it', async () => {
    for (const member of [viewer, developer]) {
      for (const url of ['/policy-log', '/policy-log/export?format=csv', VERIFY]) {
        const page = await member.client.get(url);
        expect(page.status, url).toBe(403);
        expect(page.html).not.toContain(myEntries[0]!.message_id);
        expect(page.response.headers['x-total-entries']).toBeUndefined();
      }
      const started = await member.client.submit('/instances', VERIFY, {});
      expect(started.status).toBe(403);
      expect(started.response.headers['content-disposition']).toBeUndefined();
      expect((await member.client.get('/instances')).html).not.toContain('href="/policy-log"');
    }
    for (const member of [owner, admin, compliance]) {
      expect((await member.client.get('/policy-log')).status).toBe(200);
      expect((await member.client.get('/policy-log/export?format=ndjson')).response.headers['x-total-entries']).toBe('5');
    }
  });
});
