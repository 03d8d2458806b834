import { beforeAll, describe, expect, it } from 'vitest';
import { sql, z } from '@gw/db';
import { SEAL_USES } from '@gw/security';
import { deliveryIdFor, standardWebhooksSecret, WEBHOOK_EVENT_GROUPS } from '@gw/webhooks';
import { gatewayEventWriter } from '../../../../test/support/webhook-events.ts';
import { useApiFixture } from '../../../../test/support/api/api-fixture.ts';
import { memberWithRole, type TestMember } from '../../../../test/support/dashboard/members.ts';
import { submitFields } from '../../../../test/support/dashboard/multi-value-form.ts';
import { field, signUpWithMfa, textOf, totpNow, type PageClient } from '../../../../test/support/dashboard/page-client.ts';

// The webhook tab of an instance's manage page, in-process over real Postgres and Kafka: instances
// are made through the dashboard's own POST /instances (on the fixture's simulator). The webhooks
// service does not run here, so queued deliveries stay pending; the log's rows are written as the
// service writes them. The test configuration opens no address range (WEBHOOK_ALLOW_CIDRS empty).
const suite = useApiFixture();
const app = () => suite.fixture.app;
const pool = () => suite.fixture.runtime.pool;

const RECEIVER = 'https://93.184.216.34/hooks/chat';
const SECRET = /whsec_[A-Za-z0-9_-]{43}/;

type Owner = Awaited<ReturnType<typeof signUpWithMfa>>;
let owner: Owner;
let stranger: Owner;
let viewer: TestMember;
let customerId: string;
let instanceId: string;
let strangersInstance: string;

const tabOf = (id: string) => `/instances/${id}/manage?tab=webhook`;
const customerOf = (email: string) =>
  pool().oneFirst(sql.type(z.object({ customer_id: z.string() }))`SELECT m.customer_id FROM users u JOIN memberships m ON m.user_id = u.id WHERE u.email = ${email}`);

async function createInstance(client: PageClient, name: string): Promise<string> {
  const page = await client.submit('/instances', '/instances', { name });
  expect(page.status, page.html).toBe(303);
  return /^\/instances\/(ins_[A-Za-z0-9]+)\/manage/.exec(page.location ?? '')![1]!;
}

/**
 * Sends the configure form as the tab does: the URL, each ticked event, the preset button when
 * pressed, and the authenticator code when one is typed (a new destination asks for it).
 */
const configure = (client: PageClient, id: string, url: string, events: readonly string[], options: { preset?: string; code?: string } = {}) =>
  submitFields(app(), client, tabOf(id), `/instances/${id}/webhook`, [
    ['url', url],
    ...events.map((e): [string, string] => ['events', e]),
    ...(options.preset ? [['preset', options.preset] as [string, string]] : []),
    ...(options.code !== undefined ? [['code', options.code] as [string, string]] : []),
  ]);

const Endpoint = z.object({ destination_url: z.string(), events: z.array(z.string()), status: z.string(), signing_secret_enc: z.string() });
const endpointOf = (id: string) => pool().maybeOne(sql.type(Endpoint)`SELECT destination_url, events, status, signing_secret_enc FROM webhook_endpoints WHERE instance_id = ${id}`);
const Delivery = z.object({ state: z.string(), round_attempts: z.number(), attempts: z.number(), next_attempt_at: z.date() });
const deliveryOf = (id: string) => pool().one(sql.type(Delivery)`SELECT state, round_attempts, attempts, next_attempt_at FROM webhook_deliveries WHERE delivery_id = ${id}`);

const audited = (action: string, subjectId: string) =>
  suite.fixture.record((r) => r.event.type === 'AccountChanged' && r.event.payload.customer_id === customerId && r.event.payload.action === action && r.event.payload.subject_id === subjectId, `${action} of ${subjectId}`);

/** A delivery with its attempts, as the webhooks service writes them. */
async function deliveryWithAttempts(eventId: string, state: string, attempts: Array<{ status: number | null; error?: string; latency: number; body: string; outcome: string }>) {
  const id = deliveryIdFor(eventId, instanceId);
  await pool().query(sql.typeAlias('void')`
    INSERT INTO webhook_deliveries (delivery_id, event_id, instance_id, customer_id, event, body, occurred_at, state, next_attempt_at, attempts, round_attempts, last_status)
    VALUES (${id}, ${eventId}, ${instanceId}, ${customerId}, 'message.received', '{"event":"message.received"}', now() - interval '10 minutes', ${state},
            now() + interval '1 hour', ${attempts.length}, ${attempts.length}, ${attempts.at(-1)?.status ?? null})`);
  for (const [n, a] of attempts.entries()) {
    await pool().query(sql.typeAlias('void')`
      INSERT INTO webhook_attempts (delivery_id, attempt, attempted_at, destination_url, status_code, latency_ms, response_snippet, error, outcome, next_attempt_at)
      VALUES (${id}, ${n + 1}, now() - ${`${9 - n} minutes`}::interval, ${RECEIVER}, ${a.status}, ${a.latency}, ${a.body}, ${a.error ?? null}, ${a.outcome}, ${a.outcome === 'retry' ? sql.fragment`now() + interval '5 minutes'` : null})`);
  }
  return id;
}

beforeAll(async () => {
  owner = await signUpWithMfa(app(), { organisation: 'Hook Clinics' });
  customerId = await customerOf(owner.email);
  instanceId = await createInstance(owner.client, 'hooks-desk');
  viewer = await memberWithRole(app(), pool(), suite.fixture.box, customerId, 'viewer');
  stranger = await signUpWithMfa(app(), { organisation: 'Elsewhere Ltd' });
  strangersInstance = await createInstance(stranger.client, 'their-desk');
}, 120_000);

describe('an instance without a webhook', () => {
  it('says so, and offers the events grouped as the contract groups them, the recommended ones ticked', async () => {
    const page = await owner.client.get(tabOf(instanceId));
    expect(page.status).toBe(200);
    expect(page.html).toContain('aria-current="page">Webhook</a>');
    expect(page.html).toContain('id="webhook-none"');
    expect(page.html).toContain(`action="/instances/${instanceId}/webhook"`);
    // One fieldset per group, in the contract's order, each with its events.
    const groups = [...page.html.matchAll(/<fieldset class="events" id="events-([a-z]+)">([\s\S]*?)<\/fieldset>/g)];
    expect(groups.map((g) => g[1])).toEqual(Object.keys(WEBHOOK_EVENT_GROUPS));
    for (const [, name, body] of groups) {
      const boxes = [...body!.matchAll(/name="events" value="([a-z._]+)" (checked)?/g)];
      expect(boxes.map((b) => b[1])).toEqual(WEBHOOK_EVENT_GROUPS[name as keyof typeof WEBHOOK_EVENT_GROUPS]);
      expect(boxes.every((b) => Boolean(b[2]) === (name === 'recommended'))).toBe(true);
    }
    expect(page.html).toMatch(/<button type="submit" class="secondary" name="preset" value="recommended">/);

    const seen = await viewer.client.get(tabOf(instanceId));
    expect(seen.status).toBe(200);
    expect(seen.html).toContain('can set one up');
    expect(seen.html).not.toContain(`action="/instances/${instanceId}/webhook"`);
  });
});

describe('configuring', () => {
  it('refuses addresses the SSRF guard refuses, saying why in words, keeping the form, saving nothing', async () => {
    const refused = async (url: string) => {
      const page = await configure(owner.client, instanceId, url, ['message.received', 'call.missed'], { code: await totpNow(owner.secret) });
      expect(page.status, url).toBe(400);
      expect(field(page.html, 'url')).toBe(url);
      expect(page.html).toMatch(/name="events" value="call.missed" checked/);
      expect(page.html).not.toMatch(/name="events" value="message.sent" checked/);
      return page.html;
    };
    const privateNet = await refused('https://10.1.2.3/hooks');
    expect(privateNet).toContain('10.1.2.3 is a private network address');
    expect(privateNet).toContain('The gateway posts only to public internet addresses');
    expect(privateNet).toContain('In detail: destination address 10.1.2.3, which is not a public internet address: 10.1.2.3 is in 10.0.0.0/8');
    expect(await refused('https://169.254.169.254/latest/meta-data')).toContain('169.254.169.254 is a link-local address');
    expect(await refused('https://[::1]:8080/hook')).toContain('is a loopback address, which would point the gateway at itself');
    // Plain http is refused by default (WEBHOOK_ALLOW_HTTP is not set here), even to a public address.
    expect(await refused('http://93.184.216.34/hooks/chat')).toContain('This gateway posts only over https://');
    expect(await refused('https://user:secret@93.184.216.34/hook')).toContain('Remove the user name and password from the address');
    expect(await refused('ftp://93.184.216.34/hook')).toContain('not to &quot;ftp:&quot; addresses');
    expect(await refused('https://93.184.216.34:22/hook')).toContain('Port 22 is not allowed');
    expect(await refused('not a url')).toContain('That is not a complete web address');
    expect(await endpointOf(instanceId)).toBeNull();

    const none = await configure(owner.client, instanceId, RECEIVER, [], { code: await totpNow(owner.secret) });
    expect(none.status).toBe(400);
    expect(none.html).toContain('Choose at least one event');
  });

  it('saves a public address: active, the signing secret shown once in that answer and never again', async () => {
    // A first destination asks for a current code (step-up): without one, or a wrong one, the
    // form comes back with a 400 that says so, its fields kept, and nothing is saved.
    for (const code of [undefined, '000000']) {
      const refused = await configure(owner.client, instanceId, RECEIVER, ['message.received', 'call.missed'], code === undefined ? {} : { code });
      expect(refused.status, code).toBe(400);
      expect(refused.html).toContain('to confirm this change');
      expect(field(refused.html, 'url')).toBe(RECEIVER);
      expect(await endpointOf(instanceId)).toBeNull();
    }
    const saved = await configure(owner.client, instanceId, RECEIVER, ['message.received', 'call.missed'], { code: await totpNow(owner.secret) });
    expect(saved.status, saved.html).toBe(200);
    expect(saved.response.headers['cache-control']).toBe('no-store');
    const secret = textOf(saved.html, 'signing-secret')!;
    expect(secret).toMatch(new RegExp(`^${SECRET.source}$`));
    expect(saved.html).toContain('shown only this once');
    expect(textOf(saved.html, 'webhook-status')).toBe('active');

    const stored = (await endpointOf(instanceId))!;
    expect(stored).toMatchObject({ destination_url: RECEIVER, events: ['message.received', 'call.missed'], status: 'active' });
    expect(suite.fixture.box.open(stored.signing_secret_enc, SEAL_USES.webhookSigningSecret(instanceId))).toBe(secret);
    await audited('webhook.configured', instanceId);

    const later = await owner.client.get(tabOf(instanceId));
    expect(later.html).not.toMatch(SECRET);
    expect(textOf(later.html, 'webhook-status')).toBe('active');
    expect(textOf(later.html, 'webhook-destination')).toBe(RECEIVER);
    expect(later.html).toMatch(/name="events" value="call.missed" checked/);
    expect(later.html).not.toContain('id="webhook-none"');
    expect((await viewer.client.get(tabOf(instanceId))).html).not.toMatch(SECRET);

    // "All recommended" saves the recommended group, whatever is ticked, and keeps the secret; the
    // destination is the same, so no code is asked.
    const recommended = await configure(owner.client, instanceId, RECEIVER, ['call.missed'], { preset: 'recommended' });
    expect(recommended.status).toBe(303);
    expect(recommended.location).toBe(`/instances/${instanceId}/manage?tab=webhook&done=webhook_saved`);
    expect(await endpointOf(instanceId)).toMatchObject({ events: [...WEBHOOK_EVENT_GROUPS.recommended], signing_secret_enc: stored.signing_secret_enc });
    const after = await owner.client.get(recommended.location!);
    expect(textOf(after.html, 'webhook-notice')).toContain('Webhook saved');
    expect(after.html).not.toMatch(SECRET);

    // Pointing the events elsewhere asks for a code again: without one, the destination stays.
    const elsewhere = 'https://93.184.216.35/hooks/chat';
    const moved = await configure(owner.client, instanceId, elsewhere, ['message.received']);
    expect(moved.status).toBe(400);
    expect(moved.html).toContain('to confirm this change');
    expect(await endpointOf(instanceId)).toMatchObject({ destination_url: RECEIVER, events: [...WEBHOOK_EVENT_GROUPS.recommended] });
  });

  it('saves only onto the destination its code decision read: another member moving it meanwhile makes it a 409, not a move without a code', async () => {
    // Another member points the webhook elsewhere, in a transaction still open (its row locked)
    // while this member saves the current address with other events: the route reads the address
    // as it was, so asks no code, and its save waits for that row. Once the other change commits,
    // saving would move the destination back without anyone's code; it is refused instead.
    const elsewhere = 'https://93.184.216.36/hooks/chat';
    const before = (await endpointOf(instanceId))!;
    expect(before.destination_url).toBe(RECEIVER);
    // The other member's transaction runs beside this test, not around it (a query of the pool
    // inside a transaction's callback would be refused as a foreign connection).
    let commit!: () => void;
    const committed = new Promise<void>((resolve) => (commit = resolve));
    let locked!: (pid: number) => void;
    const lockedBy = new Promise<number>((resolve) => (locked = resolve));
    const other = pool().transaction(async (tx) => {
      await tx.query(sql.typeAlias('void')`UPDATE webhook_endpoints SET destination_url = ${elsewhere} WHERE instance_id = ${instanceId}`);
      locked(await tx.oneFirst(sql.type(z.object({ pid: z.number() }))`SELECT pg_backend_pid() AS pid`));
      await committed;
    });
    const pid = await lockedBy;
    let answered = false;
    const saving = configure(owner.client, instanceId, RECEIVER, ['message.received']).finally(() => (answered = true));
    // Commit once the save waits on the row (had it answered first, the race would not be run).
    const waiting = () => pool().oneFirst(sql.type(z.object({ n: z.number() }))`SELECT count(*)::int AS n FROM pg_stat_activity WHERE ${pid} = ANY(pg_blocking_pids(pid))`);
    try {
      for (let tries = 0; !answered && (await waiting()) === 0; tries++) {
        if (tries > 400) throw new Error('the save never waited on the row');
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
      expect(answered).toBe(false);
    } finally {
      commit();
      await other;
    }
    const answer = await saving;
    expect(answer.status, answer.html).toBe(409);
    expect(answer.html).toContain('while you were saving, so your change was not saved');
    expect(field(answer.html, 'url')).toBe(RECEIVER);
    expect(textOf(answer.html, 'webhook-destination')).toBe(elsewhere);
    expect(await endpointOf(instanceId)).toMatchObject({ destination_url: elsewhere, events: before.events });
    // Back as the later tests expect it.
    await pool().query(sql.typeAlias('void')`UPDATE webhook_endpoints SET destination_url = ${RECEIVER} WHERE instance_id = ${instanceId}`);
  });

  it('rotating the secret asks for a current code, then shows the new secret once, in both forms, and until when the old one still signs', async () => {
    const before = (await endpointOf(instanceId))!.signing_secret_enc;
    const oldSecret = suite.fixture.box.open(before, SEAL_USES.webhookSigningSecret(instanceId));
    const rotate = (code?: string) => owner.client.submit(tabOf(instanceId), `/instances/${instanceId}/webhook/rotate-secret`, code === undefined ? {} : { code });
    expect((await rotate()).status).toBe(403);
    const wrong = await rotate('000000');
    expect(wrong.status).toBe(403);
    expect(wrong.html).toContain('asks for your current authenticator code');
    expect((await endpointOf(instanceId))!.signing_secret_enc).toBe(before);

    const rotated = await rotate(await totpNow(owner.secret));
    expect(rotated.status, rotated.html).toBe(200);
    const secret = textOf(rotated.html, 'signing-secret')!;
    expect(secret).toMatch(SECRET);
    expect(textOf(rotated.html, 'standard-webhooks-secret')).toBe(standardWebhooksSecret(secret));
    expect(rotated.html).toContain('signed with both the old and the new secret until');
    expect(suite.fixture.box.open((await endpointOf(instanceId))!.signing_secret_enc, SEAL_USES.webhookSigningSecret(instanceId))).toBe(secret);
    // The old secret stays, sealed, beside the new one for the configured overlap (24 h by default).
    const kept = await pool().one(sql.type(z.object({ previous_signing_secret_enc: z.string(), previous_secret_expires_at: z.date(), secret_rotated_at: z.date() }))`
      SELECT previous_signing_secret_enc, previous_secret_expires_at, secret_rotated_at FROM webhook_endpoints WHERE instance_id = ${instanceId}`);
    expect(kept.previous_signing_secret_enc).toBe(before);
    expect(suite.fixture.box.open(kept.previous_signing_secret_enc, SEAL_USES.webhookSigningSecret(instanceId))).toBe(oldSecret);
    expect(kept.previous_secret_expires_at.getTime() - kept.secret_rotated_at.getTime()).toBe(24 * 3_600_000);
    await audited('webhook.secret_rotated', instanceId);
    expect((await owner.client.get(tabOf(instanceId))).html).not.toMatch(SECRET);
  });
});

describe('the deliveries log', () => {
  it('shows each delivery with every attempt: answer, time taken and the start of the body, escaped; Resend puts it back to pending', async () => {
    const long = `<script>alert("x")</script>${'y'.repeat(600)}`;
    const id = await deliveryWithAttempts('evt-dash-log-1', 'failed', [
      { status: 503, latency: 120, body: long, outcome: 'retry' },
      { status: null, error: 'timeout', latency: 15000, body: '', outcome: 'failed' },
    ]);
    const page = await owner.client.get(tabOf(instanceId));
    const entry = new RegExp(`<li id="delivery-${id}">([\\s\\S]*?)</li>`).exec(page.html)?.[1];
    expect(entry, page.html).toBeDefined();
    expect(entry).toContain('<span class="status bad">failed</span>');
    expect(entry).toContain('HTTP 503');
    expect(entry).toContain('120 ms');
    expect(entry).toContain('retry scheduled for ');
    expect(entry).toContain('timeout');
    expect(entry).toContain('15000 ms');
    expect(entry).toContain('&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;');
    expect(entry).not.toContain('<script>');
    expect(entry).toContain(`${'y'.repeat(300 - '<script>alert("x")</script>'.length)}…`);
    expect(entry).not.toContain('y'.repeat(400));
    expect(entry).toContain(`action="/instances/${instanceId}/webhook/deliveries/${id}/resend"`);

    const resent = await owner.client.submit(tabOf(instanceId), `/instances/${instanceId}/webhook/deliveries/${id}/resend`, {});
    expect(resent.status).toBe(303);
    expect(resent.location).toBe(`/instances/${instanceId}/manage?tab=webhook&done=webhook_resent`);
    const row = await deliveryOf(id);
    expect(row).toMatchObject({ state: 'pending', round_attempts: 0, attempts: 2 });
    expect(row.next_attempt_at.getTime()).toBeLessThanOrEqual(Date.now());
    await audited('webhook.delivery_resent', id);
    expect(textOf((await owner.client.get(resent.location!)).html, 'webhook-notice')).toContain('Delivery queued again');

    const viewed = await viewer.client.get(tabOf(instanceId));
    expect(viewed.html).toContain(`id="delivery-${id}"`);
    expect(viewed.html).not.toContain('/resend"');
  });

  it('a delivery being sent is not resent; an unknown one is a 404', async () => {
    const id = await deliveryWithAttempts('evt-dash-log-2', 'in_flight', []);
    expect((await owner.client.get(tabOf(instanceId))).html).not.toContain(`/deliveries/${id}/resend`);
    const busy = await owner.client.submit(tabOf(instanceId), `/instances/${instanceId}/webhook/deliveries/${id}/resend`, {});
    expect(busy.status).toBe(409);
    expect(textOf(busy.html, 'webhook-deliveries-error')).toContain('being sent right now');
    expect((await deliveryOf(id)).state).toBe('in_flight');
    expect((await owner.client.submit(tabOf(instanceId), `/instances/${instanceId}/webhook/deliveries/whd_00000000000000000000000000000000/resend`, {})).status).toBe(404);
  });

  it('recovers the events the webhook missed since a time, read from the gateway-events topic', async () => {
    const writer = await gatewayEventWriter(suite.fixture.isolation.env);
    let emitted: Awaited<ReturnType<typeof writer.emit>>;
    try {
      const at = new Date(Date.now() - 5 * 60_000);
      emitted = await writer.emit([
        { customerId, instanceId, instanceName: 'hooks-desk', event: 'message.received', at },
        { customerId, instanceId, instanceName: 'hooks-desk', event: 'call.missed', at }, // not subscribed
      ]);
    } finally {
      await writer.close();
    }
    const since = new Date(Date.now() - 10 * 60_000).toISOString().slice(0, 16);
    const recover = (value: string) => owner.client.submit(tabOf(instanceId), `/instances/${instanceId}/webhook/recover`, { since: value });
    const done = await recover(since);
    expect(done.status, done.html).toBe(303);
    expect(done.location).toBe(`/instances/${instanceId}/manage?tab=webhook&done=webhook_recovered`);
    expect((await deliveryOf(deliveryIdFor(emitted[0]!.event_id, instanceId))).state).toBe('pending');
    expect(await pool().exists(sql.typeAlias('void')`SELECT FROM webhook_deliveries WHERE event_id = ${emitted[1]!.event_id}`)).toBe(false);
    await audited('webhook.recovered', instanceId);

    for (const [value, words] of [
      ['yesterday', 'Give the date and time (UTC)'],
      [new Date(Date.now() + 3_600_000).toISOString().slice(0, 16), 'in the future'],
      ['2020-01-01T00:00', 'reaches back 30 days at most'],
    ]) {
      const refused = await recover(value!);
      expect(refused.status, value).toBe(400);
      expect(textOf(refused.html, 'webhook-recover-error')).toContain(words);
      expect(field(refused.html, 'since')).toBe(value);
    }
  });
});

describe('status', () => {
  it('shows a disabled webhook with why, offers resume (not resend), and pause holds deliveries', async () => {
    await pool().query(sql.typeAlias('void')`UPDATE webhook_endpoints SET status = 'disabled', disabled_reason = 'gone', disabled_at = now() WHERE instance_id = ${instanceId}`);
    const page = await owner.client.get(tabOf(instanceId));
    expect(textOf(page.html, 'webhook-status')).toBe('disabled');
    expect(textOf(page.html, 'webhook-status-about')).toContain('your receiver answered 410 Gone');
    expect(page.html).not.toContain('/resend"');
    expect(page.html).toContain(`action="/instances/${instanceId}/webhook/resume"`);
    const id = deliveryIdFor('evt-dash-log-1', instanceId);
    const refused = await owner.client.submit(tabOf(instanceId), `/instances/${instanceId}/webhook/deliveries/${id}/resend`, {});
    expect(refused.status).toBe(409);
    expect(textOf(refused.html, 'webhook-deliveries-error')).toContain('This webhook is disabled: your receiver answered 410 Gone');
    expect(refused.html).not.toContain('gatewayctl');

    const resumed = await owner.client.submit(tabOf(instanceId), `/instances/${instanceId}/webhook/resume`, {});
    expect(resumed.status).toBe(303);
    expect((await endpointOf(instanceId))!.status).toBe('active');
    const paused = await owner.client.submit(tabOf(instanceId), `/instances/${instanceId}/webhook/pause`, {});
    expect(paused.status).toBe(303);
    expect(textOf((await owner.client.get(paused.location!)).html, 'webhook-status')).toBe('paused');
    await owner.client.submit(tabOf(instanceId), `/instances/${instanceId}/webhook/resume`, {});
  });
});

describe('who may do what', () => {
  const posts = (id: string, deliveryId = 'whd_00000000000000000000000000000000'): Array<[string, Record<string, string>]> => [
    [`/instances/${id}/webhook`, { url: RECEIVER, events: 'message.received' }],
    [`/instances/${id}/webhook/rotate-secret`, { code: '000000' }],
    [`/instances/${id}/webhook/pause`, {}],
    [`/instances/${id}/webhook/resume`, {}],
    [`/instances/${id}/webhook/deliveries/${deliveryId}/resend`, {}],
    [`/instances/${id}/webhook/recover`, { since: new Date(Date.now() - 3_600_000).toISOString().slice(0, 16) }],
  ];

  it('every change needs the page\'s CSRF token', async () => {
    const before = await endpointOf(instanceId);
    for (const [action, fields] of posts(instanceId, deliveryIdFor('evt-dash-log-1', instanceId))) {
      const page = await owner.client.submit(tabOf(instanceId), action, fields, { csrf: null });
      expect(page.status, action).toBe(403);
    }
    expect(await endpointOf(instanceId)).toEqual(before);
  });

  it('a viewer sees the tab but is refused (403) every change', async () => {
    const before = await endpointOf(instanceId);
    for (const [action, fields] of posts(instanceId, deliveryIdFor('evt-dash-log-1', instanceId))) {
      const page = await viewer.client.submit(tabOf(instanceId), action, fields);
      expect(page.status, action).toBe(403);
    }
    expect(await endpointOf(instanceId)).toEqual(before);
  });

  it("another customer gets 404 for this instance on every route, its deliveries included", async () => {
    const before = await endpointOf(instanceId);
    const tab = await stranger.client.get(tabOf(instanceId));
    expect(tab.status).toBe(404);
    expect(tab.html).not.toContain(RECEIVER);
    for (const [action, fields] of posts(instanceId, deliveryIdFor('evt-dash-log-1', instanceId))) {
      const page = await stranger.client.submit(tabOf(strangersInstance), action, action.endsWith('rotate-secret') ? { code: await totpNow(stranger.secret) } : fields);
      expect(page.status, action).toBe(404);
    }
    // Through their own instance, this customer's delivery is unknown too.
    expect((await configure(stranger.client, strangersInstance, RECEIVER, ['message.received'], { code: await totpNow(stranger.secret) })).status).toBe(200);
    const theirs = await stranger.client.submit(tabOf(strangersInstance), `/instances/${strangersInstance}/webhook/deliveries/${deliveryIdFor('evt-dash-log-1', instanceId)}/resend`, {});
    expect(theirs.status).toBe(404);
    expect(theirs.html).toContain('No such delivery');
    expect(await endpointOf(instanceId)).toEqual(before);
  });
});
