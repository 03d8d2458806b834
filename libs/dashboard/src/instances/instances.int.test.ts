import { beforeAll, describe, expect, it } from 'vitest';
import { sql, z } from '@gw/db';
import type { SendRequested } from '@gw/events';
import { useApiFixture, type TestAccount } from '../../../../test/support/api/api-fixture.ts';
import { delivered, rejected, type WaitCall } from '../../../../test/support/api/fake-replies.ts';
import { memberWithRole } from '../../../../test/support/dashboard/members.ts';
import { field, PageClient, signUpWithMfa, textOf } from '../../../../test/support/dashboard/page-client.ts';

// The instances pages in-process, over real Postgres and Kafka and the fixture's instance
// simulator (the manager instances are created on); the reply router is the fixture's fake.
const suite = useApiFixture();
const app = () => suite.fixture.app;
const pool = () => suite.fixture.runtime.pool;
const sim = () => suite.fixture.simulator;

const customerOf = (email: string) =>
  pool().oneFirst(sql.type(z.object({ customer_id: z.string() }))`SELECT m.customer_id FROM users u JOIN memberships m ON m.user_id = u.id WHERE u.email = ${email}`);
const managerInstanceOf = (id: string) => pool().oneFirst(sql.type(z.object({ manager_instance: z.string() }))`SELECT manager_instance FROM instances WHERE id = ${id}`);

/** Creates an instance through the page; its id, from the redirect to its manage page. */
async function create(client: PageClient, name: string): Promise<string> {
  const page = await client.submit('/instances', '/instances', { name });
  expect(page.status, page.html).toBe(303);
  const id = /^\/instances\/(ins_[A-Za-z0-9]+)\/manage\?done=created$/.exec(page.location ?? '')?.[1];
  expect(id, page.location).toBeDefined();
  return id!;
}

/** GET /instances/:id/state as the live script asks it (the client's session, JSON). */
async function stateOf(client: PageClient, id: string) {
  const cookie = [...client.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
  const response = await app().inject({ method: 'GET', url: `/instances/${id}/state`, headers: { cookie, accept: 'application/json' } });
  return { status: response.statusCode, body: response.json() as { connection_state: string; qr: string | null; pairing_code: string | null } };
}

const audited = (customerId: string, action: string, subjectId: string) =>
  suite.fixture.record((r) => r.event.type === 'AccountChanged' && r.event.payload.customer_id === customerId && r.event.payload.action === action && r.event.payload.subject_id === subjectId, `${action} of ${subjectId}`);

let owner: Awaited<ReturnType<typeof signUpWithMfa>>;
let customerId: string;

beforeAll(async () => {
  owner = await signUpWithMfa(app(), { organisation: 'Front Desk Clinics' });
  customerId = await customerOf(owner.email);
}, 60_000);

describe('the list', () => {
  it('tells a new customer to create an instance; a viewer is told who can', async () => {
    const page = await owner.client.get('/instances');
    expect(page.status).toBe(200);
    expect(page.html).toMatch(/id="instances-empty">\s*<h2>No instances yet<\/h2>/);
    expect(page.html).toContain('Create your first instance below');
    expect(page.html).toContain('action="/instances"');

    const viewer = await memberWithRole(app(), pool(), suite.fixture.box, customerId, 'viewer');
    const seen = await viewer.client.get('/instances');
    expect(seen.status).toBe(200);
    expect(seen.html).toContain('An owner or admin can create one');
    expect(seen.html).not.toContain('action="/instances"');
  });
});

describe('creating, pairing, disconnecting and deleting', () => {
  let id: string;
  let managerInstance: string;

  it('creates the instance on the manager and in Postgres, points its events at the gateway, and opens its manage page', async () => {
    id = await create(owner.client, 'front-desk');
    managerInstance = await managerInstanceOf(id);
    expect((await sim().call('GET', `/instance/connectionState/${managerInstance}`)).body.instance.state).toBe('connecting');
    const webhook = await sim().call('GET', `/webhook/find/${managerInstance}`);
    // The token goes in a header the manager sends with every post, never in the URL (access logs).
    expect(webhook.body.url).toBe(`https://gateway.test/integrations/instances/${id}/events`);
    expect(webhook.body.headers?.Authorization).toMatch(/^Bearer [A-Za-z0-9_-]{43}$/);
    await audited(customerId, 'instance.created', id);

    const list = await owner.client.get('/instances');
    expect(list.html).toContain(`href="/instances/${id}/manage">front-desk</a>`);
    expect(list.html).toContain('data-state="connecting">Waiting for a phone to link');
    expect(list.html).not.toContain('instances-empty');
  });

  it('refuses a name outside the rule and one already used, saying why', async () => {
    const bad = await owner.client.submit('/instances', '/instances', { name: 'front desk!' });
    expect(bad.status).toBe(400);
    expect(textOf(bad.html, 'create-error')).toBe('Instance names use letters, digits, ".", "_" and "-" (at most 64).');
    const taken = await owner.client.submit('/instances', '/instances', { name: 'front-desk' });
    expect(taken.status).toBe(409);
    expect(textOf(taken.html, 'create-error')).toBe('The customer already has an instance named front-desk.');
  });

  it('shows the state and the QR code before pairing (a new one when pairing restarts), then connected once paired', async () => {
    const page = await owner.client.get(`/instances/${id}/manage?done=created`);
    expect(page.status).toBe(200);
    expect(textOf(page.html, 'connection-state')).toBe('Waiting for a phone to link');
    expect(page.html).toMatch(/id="qr-image" class="qr" src="data:image\/png;base64,[A-Za-z0-9+/=]+"/);
    expect(page.html).toContain('<script src="/assets/instance-live.js" defer></script>');
    expect(page.html).not.toMatch(/<script(?![^>]*\bsrc=)/);
    expect(page.html).toContain('aria-current="page">Connection</a>');

    const before = await stateOf(owner.client, id);
    expect(before).toEqual({ status: 200, body: { connection_state: 'connecting', qr: expect.stringMatching(/^data:image\/png;base64,/), pairing_code: null } });
    // Pairing again with the phone's number: a new QR code, and a pairing code to type instead.
    const restart = await owner.client.submit(`/instances/${id}/manage`, `/instances/${id}/connect`, { phone: '+1 415 555 2671' });
    expect(restart).toMatchObject({ status: 303, location: `/instances/${id}/manage?done=pairing` });
    const again = await stateOf(owner.client, id);
    expect(again.body.connection_state).toBe('connecting');
    expect(again.body.qr).not.toBe(before.body.qr);
    expect(again.body.pairing_code).toEqual(expect.any(String));
    expect(textOf((await owner.client.get(`/instances/${id}/manage`)).html, 'pairing-code')).toBe(again.body.pairing_code);

    expect((await sim().call('POST', `/sim/instances/${managerInstance}/pair`)).status).toBe(200);
    expect(await stateOf(owner.client, id)).toEqual({ status: 200, body: { connection_state: 'open', qr: null, pairing_code: null } });
    const paired = await owner.client.get(`/instances/${id}/manage`);
    expect(textOf(paired.html, 'connection-state')).toBe('Connected');
    expect(paired.html).toContain(`action="/instances/${id}/disconnect"`);
    expect(paired.html).not.toContain('src="data:image/png');
  });

  it('shows the Webhook tab with its section', async () => {
    const page = await owner.client.get(`/instances/${id}/manage?tab=webhook`);
    expect(page.status).toBe(200);
    expect(page.html).toContain('id="webhook-tab"');
    expect(page.html).toContain('aria-current="page">Webhook</a>');
    expect(page.html).not.toContain('id="connection"');
  });

  it('disconnects the phone', async () => {
    const done = await owner.client.submit(`/instances/${id}/manage`, `/instances/${id}/disconnect`, {});
    expect(done).toMatchObject({ status: 303, location: `/instances/${id}/manage?done=disconnected` });
    expect((await stateOf(owner.client, id)).body).toEqual({ connection_state: 'close', qr: null, pairing_code: null });
    expect(textOf((await owner.client.get(`/instances/${id}/manage`)).html, 'connection-state')).toBe('Not connected');
    await audited(customerId, 'instance.disconnected', id);
  });

  it('deletes it once its name is typed: gone from the manager and the pages, its row kept as deleted', async () => {
    const unconfirmed = await owner.client.submit(`/instances/${id}/manage`, `/instances/${id}/delete`, { confirm: 'front' });
    expect(unconfirmed.status).toBe(400);
    expect(textOf(unconfirmed.html, 'manage-error')).toBe("To delete it, type the instance's name (front-desk) in the box.");

    const deleted = await owner.client.submit(`/instances/${id}/manage`, `/instances/${id}/delete`, { confirm: 'front-desk' });
    expect(deleted).toMatchObject({ status: 303, location: '/instances?done=deleted' });
    expect((await sim().call('GET', `/instance/connectionState/${managerInstance}`)).status).toBe(404);
    const deletedAt = await pool().oneFirst(sql.type(z.object({ deleted_at: z.date().nullable() }))`SELECT deleted_at FROM instances WHERE id = ${id}`);
    expect(deletedAt).toBeInstanceOf(Date);
    const list = await owner.client.get('/instances?done=deleted');
    expect(list.html).toContain('The instance was deleted.');
    expect(list.html).toContain('instances-empty');
    expect((await owner.client.get(`/instances/${id}/manage`)).status).toBe(404);
    expect((await stateOf(owner.client, id)).status).toBe(404);
    await audited(customerId, 'instance.deleted', id);
  });

  it('refuses to delete an instance an enabled PBX integration sends through, saying which', async () => {
    const demo = await suite.fixture.account();
    const demoOwner = await memberWithRole(app(), pool(), suite.fixture.box, demo.customer_id, 'owner');
    const refused = await demoOwner.client.submit(`/instances/${demo.instance_id}/manage`, `/instances/${demo.instance_id}/delete`, { confirm: demo.instance_name });
    expect(refused.status).toBe(409);
    expect(textOf(refused.html, 'manage-error')).toBe(`PBX integration ${demo.pbx_integration_id} sends through ${demo.instance_name}. Disable it first, then delete the instance.`);
    expect((await stateOf(demoOwner.client, demo.instance_id)).body.connection_state).toBe('open');
  });
});

describe('roles and tenants', () => {
  let other: TestAccount;
  let id: string;

  beforeAll(async () => {
    id = await create(owner.client, 'reception');
    other = await suite.fixture.account();
  }, 60_000);

  it('a viewer sees the instances and their state, but no pairing code, and may not create, pair, disconnect, delete or test-send (403)', async () => {
    const viewer = await memberWithRole(app(), pool(), suite.fixture.box, customerId, 'viewer');
    expect((await viewer.client.get('/instances')).html).toContain(`href="/instances/${id}/manage">reception</a>`);
    const page = await viewer.client.get(`/instances/${id}/manage`);
    expect(page.status).toBe(200);
    expect(textOf(page.html, 'connection-state')).toBe('Waiting for a phone to link');
    expect(page.html).not.toContain('id="qr-image"');
    expect(page.html).not.toContain('method="post" action="/instances/');
    expect(await stateOf(viewer.client, id)).toEqual({ status: 200, body: { connection_state: 'connecting', qr: null, pairing_code: null } });

    const csrf = field(page.html, '_csrf')!;
    for (const [url, fields] of [
      ['/instances', { name: 'viewers-own' }],
      [`/instances/${id}/connect`, {}],
      [`/instances/${id}/disconnect`, {}],
      [`/instances/${id}/delete`, { confirm: 'reception' }],
      [`/instances/${id}/test-send`, { phone: '+14155552671', message: 'hi', purpose: 'support' }],
    ] as const) {
      expect((await viewer.client.post(url, { ...fields, _csrf: csrf })).status, url).toBe(403);
    }
    expect((await stateOf(owner.client, id)).body.connection_state).toBe('connecting');
  });

  it("answers 404 to a member of another customer for the instance's manage page, state, pairing, disconnect, delete and test send", async () => {
    const foreign = other.instance_id;
    const managerInstance = await managerInstanceOf(foreign);
    expect((await owner.client.get(`/instances/${foreign}/manage`)).status).toBe(404);
    expect((await owner.client.get(`/instances/${foreign}/manage?tab=webhook`)).status).toBe(404);
    expect((await stateOf(owner.client, foreign)).status).toBe(404);
    const csrf = field((await owner.client.get('/instances')).html, '_csrf')!;
    for (const [action, fields] of [
      ['connect', {}],
      ['disconnect', {}],
      ['delete', { confirm: other.instance_name }],
      ['test-send', { phone: '+14155552671', message: 'hello', purpose: 'support' }],
    ] as const) {
      const page = await owner.client.post(`/instances/${foreign}/${action}`, { ...fields, _csrf: csrf });
      expect(page.status, action).toBe(404);
      expect(page.html).not.toContain(other.instance_name);
    }
    // Untouched on its manager: still paired.
    expect((await sim().call('GET', `/instance/connectionState/${managerInstance}`)).body.instance.state).toBe('open');
    expect((await owner.client.get('/instances')).html).not.toContain(foreign);
  });
});

describe('test sends', () => {
  let id: string;
  const send = (fields: Record<string, string>) => owner.client.submit(`/instances/${id}/manage`, `/instances/${id}/test-send`, fields);
  const lastWait = () => suite.fixture.replies.calls.at(-1)!;
  const RULES = [
    { rule: 'active_plan', outcome: 'pass' as const, detail: null },
    { rule: 'purpose_allowed', outcome: 'pass' as const, detail: null },
    { rule: 'recipient_not_suppressed', outcome: 'pass' as const, detail: null },
  ];

  beforeAll(async () => {
    id = await create(owner.client, 'test-sends');
  }, 60_000);

  it('sends through the API\'s guarded path and shows sent, the log id and every rule evaluated', async () => {
    suite.fixture.replies.answerWith((call: WaitCall) => {
      const progress = delivered(call);
      return { ...progress, decision: { ...progress.decision!, reasons: RULES } };
    });
    const message = `Your appointment is confirmed ${Date.now()}`;
    const page = await send({ phone: '+1 (415) 555-2671', message, purpose: 'transactional' });
    expect(page.status).toBe(200);
    expect(page.html).toContain('data-status="sent">Sent</span>');
    expect(textOf(page.html, 'test-send-log-id')).toBe('7001');
    expect(textOf(page.html, 'test-send-decision')).toBe('accepted');
    expect([...page.html.matchAll(/<tr data-rule="([a-z_]+)" data-outcome="([a-z]+)">/g)].map((m) => [m[1], m[2]])).toEqual(RULES.map((r) => [r.rule, r.outcome]));

    const commandId = lastWait().commandId;
    expect(lastWait().deadlineMs).toBe(suite.fixture.runtime.config.api.sendDeadlineMs);
    const record = await suite.fixture.record((r) => r.event.type === 'SendRequested' && r.event.payload.correlation_id === commandId, 'the test send command');
    expect(record.key).toBe(customerId);
    expect(record.event.payload as SendRequested).toMatchObject({
      customer_id: customerId,
      instance_id: id,
      instance_name: await managerInstanceOf(id),
      phone: '+14155552671',
      message,
      message_purpose: 'transactional',
      source: 'api',
      idempotency_key: null,
    });
  });

  it('shows a refusal with its code and the failing rule', async () => {
    suite.fixture.replies.answerWith(rejected('recipient_suppressed', 'The recipient has opted out.', { rule: 'recipient_not_suppressed', reason: 'opt_out' }));
    const page = await send({ phone: '+14155552671', message: 'Your order has shipped.', purpose: 'transactional' });
    expect(page.status).toBe(200);
    expect(page.html).toContain('data-status="refused">Refused</span>');
    expect(textOf(page.html, 'test-send-code')).toBe('recipient_suppressed');
    expect(textOf(page.html, 'test-send-log-id')).toBe('7001');
    expect(page.html).toContain('<tr data-rule="recipient_not_suppressed" data-outcome="fail">');
  });

  it('refuses a purpose outside the list, a phone not in international format and an empty text as the API does, appending nothing', async () => {
    const waits = suite.fixture.replies.calls.length;
    const cases = [
      [{ phone: '+14155552671', message: 'Big sale!', purpose: 'marketing' }, 'message_purpose_not_allowed'],
      [{ phone: '+14155552671', message: 'Hello', purpose: '' }, 'message_purpose_required'],
      [{ phone: '555', message: 'Hello', purpose: 'support' }, 'validation_error'],
      [{ phone: '+14155552671', message: '', purpose: 'support' }, 'validation_error'],
    ] as const;
    for (const [fields, code] of cases) {
      const page = await send(fields);
      expect(page.status, code).toBe(400);
      expect(textOf(page.html, 'test-send-code')).toBe(code);
      expect(page.html).toContain('nothing was sent or logged');
    }
    expect(suite.fixture.replies.calls.length).toBe(waits);
  });
});

describe('an instance manager that is not activated (Evolution 2.4: 503 LICENSE_REQUIRED)', () => {
  it('says on the instance page and on create that the manager must be activated at its /manager page', async () => {
    const id = await create(owner.client, 'licence-desk');
    expect((await sim().call('PUT', '/sim/license', { body: { required: true } })).status).toBe(200);
    try {
      const page = await owner.client.get(`/instances/${id}/manage`);
      expect(page.status).toBe(200);
      expect(textOf(page.html, 'connection-state')).toBe('Instance manager not activated');
      // Shown (not hidden), with the words.
      expect(page.html).toMatch(/<div data-when="license_required"\s+id="license-required">/);
      expect(page.html).toContain('Whoever runs it must open its <code>/manager</code> page and activate its licence there.');
      expect((await stateOf(owner.client, id)).body.connection_state).toBe('license_required');

      const refused = await owner.client.submit('/instances', '/instances', { name: 'licence-desk-2' });
      expect(refused.status).toBe(502);
      expect(textOf(refused.html, 'create-error')).toContain('not activated yet: open its /manager page and activate its licence there');
    } finally {
      await sim().call('PUT', '/sim/license', { body: { required: false } });
    }
  });
});

describe('the close wait of a re-pair (DASHBOARD_PAIRING_CLOSE_WAIT_MS)', () => {
  it('ends with 502 and "try again" when the manager has not closed the pairing under way within it', async () => {
    // No wait at all: the simulator closes an instance 250 ms after its logout (Evolution 2.3 logs out in the background).
    const impatient = await suite.fixture.build({ dashboard: { pairingCloseWaitMs: 0 } });
    try {
      const { client } = await signUpWithMfa(impatient, { organisation: 'Impatient Clinics' });
      const id = await create(client, 'impatient-desk');
      const page = await client.submit(`/instances/${id}/manage`, `/instances/${id}/connect`, { phone: '+1 415 555 2671' });
      expect(page.status).toBe(502);
      expect(page.html).toContain('The instance manager did not end the pairing under way in time');
    } finally {
      await impatient.close();
    }
  });
});
