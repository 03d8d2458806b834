import { beforeAll, describe, expect, it } from 'vitest';
import { sql } from '@gw/db';
import { useApiFixture, type TestAccount } from '../../../../test/support/api/api-fixture.ts';
import { memberWithRole, type TestMember } from '../../../../test/support/dashboard/members.ts';
import { field, signUpWithMfa, textOf, totpNow } from '../../../../test/support/dashboard/page-client.ts';

// PBX integrations in the dashboard: secrets shown once, rotation (with a code again) that ends
// the old secret at the PBX webhook itself, templates with the preview the PBX route would send,
// and every integration its own customer's.
const suite = useApiFixture();
const app = () => suite.fixture.app;
const pool = () => suite.fixture.runtime.pool;
let account: TestAccount;
let owner: TestMember;

beforeAll(async () => {
  account = await suite.fixture.account();
  owner = await memberWithRole(app(), pool(), suite.fixture.box, account.customer_id, 'owner');
  // The PBX module on, as the policy engine folds it (not running here), so events are accepted.
  await pool().query(sql.typeAlias('void')`
    INSERT INTO policy_state (customer_id, state) VALUES (${account.customer_id}, ${sql.json({ modules: { pbx: true } })})
    ON CONFLICT (customer_id) DO UPDATE SET state = EXCLUDED.state`);
}, 120_000);

/** A test event to the PBX webhook, with this secret (and signature when given a signing secret). */
async function pbxEvent(id: number | string, secret: string, signing?: string) {
  const body = JSON.stringify({ event_type: 'test', note: `n-${Math.random()}` });
  const headers: Record<string, string> = { 'content-type': 'application/json', 'x-chat-gateway-pbx-secret': secret };
  if (signing) {
    const { createHmac } = await import('node:crypto');
    const timestamp = String(Math.floor(Date.now() / 1000));
    headers['x-chat-gateway-timestamp'] = timestamp;
    headers['x-chat-gateway-signature'] = `sha256=${createHmac('sha256', signing).update(`${timestamp}.${body}`).digest('hex')}`;
  }
  const response = await app().inject({ method: 'POST', url: `/integrations/pbx/webhook/${id}`, headers, payload: body });
  return response.statusCode;
}

async function create(who: TestMember, fields: Record<string, string> = {}) {
  const page = await who.client.submit('/integrations/pbx', '/integrations/pbx', { instance_id: account.instance_id, code: await totpNow(who.secret), ...fields });
  expect(page.status, page.html).toBe(200);
  const id = Number(/Your new integration<\/h2>|integration (\d+)\)<\/h2>/.exec(page.html)?.[1]);
  return { page, id, secret: textOf(page.html, 'pbx-secret')!, signing: textOf(page.html, 'pbx-signing-secret') };
}

const cardOf = (html: string, id: number) => new RegExp(`<section class="card" id="pbx-${id}">[\\s\\S]*?</section>`).exec(html)?.[0] ?? '';

describe('the list', () => {
  it('shows each integration: webhook URL, signing, events, purpose, rate, and every template with its preview', async () => {
    const page = await owner.client.get('/integrations/pbx');
    expect(page.status).toBe(200);
    const card = cardOf(page.html, account.pbx_integration_id);
    expect(card).toContain(`https://gateway.test/integrations/pbx/webhook/${account.pbx_integration_id}`);
    expect(card).toContain('Off: the secret alone authenticates');
    expect(card).toContain('missed_call, after_hours, voicemail, queue_callback');
    expect(card).toContain('<code>support</code>');
    expect(card).toContain('120 requests a minute');
    // The preview is the PBX route's rendering, with the sample values.
    expect(card).toContain('<p class="preview" data-preview="missed_call">Sorry we missed your call at 14:05. We will call you back as soon as we can.</p>');
    expect(card).toContain('<p class="preview" data-preview="queue_callback">You asked for a callback from Support. An agent will call you shortly.</p>');
    expect(page.html).toContain('The PBX module is on');
    expect(page.html).not.toContain(account.pbx_secret);
  });
});

describe('creating an integration', () => {
  it('shows its secret (and signing secret) once; both work at the webhook; the list never shows them again', async () => {
    const { page, id, secret, signing } = await create(owner, { hmac: 'on', rate_per_minute: '30' });
    expect(page.html).toMatch(/<section class="card secret" id="shown-secrets"/);
    expect(secret).toMatch(/^pbx_/);
    expect(signing).toMatch(/^pbxsig_/);
    expect(textOf(page.html, 'shown-url')).toBe(`https://gateway.test/integrations/pbx/webhook/${id}`);
    expect(page.html).toContain('data-copy-target="pbx-secret"');
    expect(page.html).toContain('<script src="/assets/copy.js" defer></script>');
    expect(await pbxEvent(id, secret, signing!)).toBe(200);

    const list = await owner.client.get('/integrations/pbx');
    expect(list.html).not.toContain(secret);
    expect(list.html).not.toContain(signing!);
    expect(list.html).not.toContain('id="shown-secrets"');
    expect(cardOf(list.html, id)).toContain('On: every request is signed');
    expect(cardOf(list.html, id)).toContain('30 requests a minute');
    await suite.fixture.record((r) => r.event.type === 'AccountChanged' && r.event.payload.action === 'pbx.created' && r.event.payload.subject_id === String(id), 'pbx.created');
  });

  it('only on one of the customer\'s own instances; a bad rate is said so', async () => {
    const other = await suite.fixture.account();
    const theirs = await owner.client.submit('/integrations/pbx', '/integrations/pbx', { instance_id: other.instance_id, code: await totpNow(owner.secret) });
    expect(theirs.status).toBe(400);
    expect(theirs.html).toContain('Choose one of your instances.');
    const rate = await owner.client.submit('/integrations/pbx', '/integrations/pbx', { instance_id: account.instance_id, rate_per_minute: '0' });
    expect(rate.status).toBe(400);
    expect(rate.html).toContain('The rate limit is a whole number');
  });
});

describe('rotating the secret', () => {
  it('asks for a code again, shows the new secret once, and the old one gets 401 at the webhook', async () => {
    const { id, secret: old } = await create(owner);
    expect(await pbxEvent(id, old)).toBe(200);

    const noCode = await owner.client.submit('/integrations/pbx', `/integrations/pbx/${id}/rotate-secret`, { code: '000000' });
    expect(noCode.status).toBe(400);
    expect(cardOf(noCode.html, id)).toContain('Enter the current 6-digit code');
    expect(await pbxEvent(id, old)).toBe(200);

    const rotated = await owner.client.submit('/integrations/pbx', `/integrations/pbx/${id}/rotate-secret`, { code: await totpNow(owner.secret) });
    expect(rotated.status).toBe(200);
    const fresh = textOf(rotated.html, 'pbx-secret')!;
    expect(fresh).toMatch(/^pbx_/);
    expect(fresh).not.toBe(old);
    expect(rotated.html).toContain('stopped working just now');
    expect(textOf(rotated.html, 'pbx-signing-secret')).toBeNull();
    expect(await pbxEvent(id, old)).toBe(401);
    expect(await pbxEvent(id, fresh)).toBe(200);
    expect((await owner.client.get('/integrations/pbx')).html).not.toContain(fresh);
    await suite.fixture.record((r) => r.event.type === 'AccountChanged' && r.event.payload.action === 'pbx.secret_rotated' && r.event.payload.subject_id === String(id), 'pbx.secret_rotated');
  });

  it('turns HMAC signing on and off', async () => {
    const { id, secret } = await create(owner);
    const on = await owner.client.submit('/integrations/pbx', `/integrations/pbx/${id}/rotate-secret`, { hmac: 'on', code: await totpNow(owner.secret) });
    const [signedSecret, signing] = [textOf(on.html, 'pbx-secret')!, textOf(on.html, 'pbx-signing-secret')!];
    expect(signing).toMatch(/^pbxsig_/);
    expect(await pbxEvent(id, secret)).toBe(401);
    expect(await pbxEvent(id, signedSecret)).toBe(401);
    expect(await pbxEvent(id, signedSecret, signing)).toBe(200);
    expect(cardOf((await owner.client.get('/integrations/pbx')).html, id)).toContain('On: every request is signed');

    const off = await owner.client.submit('/integrations/pbx', `/integrations/pbx/${id}/rotate-secret`, { code: await totpNow(owner.secret) });
    expect(textOf(off.html, 'pbx-signing-secret')).toBeNull();
    expect(await pbxEvent(id, textOf(off.html, 'pbx-secret')!)).toBe(200);
    expect(cardOf((await owner.client.get('/integrations/pbx')).html, id)).toContain('Off: the secret alone authenticates');
  });
});

describe('templates', () => {
  it('are edited per event, and the preview follows', async () => {
    const { id } = await create(owner);
    const saved = await owner.client.submit('/integrations/pbx', `/integrations/pbx/${id}/template`, { event: 'voicemail', text: 'Thanks for your message for extension {agent_extension}; we will call {customer_phone} back.' });
    expect(saved.status).toBe(303);
    expect(saved.location).toBe(`/integrations/pbx?saved=${id}#pbx-${id}`);
    const card = cardOf((await owner.client.get(`/integrations/pbx?saved=${id}`)).html, id);
    expect(card).toContain('<p class="preview" data-preview="voicemail">Thanks for your message for extension 204; we will call +14155550123 back.</p>');
    // Not enabled any more (the box was not ticked): recorded only.
    expect(card).toContain('missed_call, after_hours, queue_callback');
    const enabled = await owner.client.submit('/integrations/pbx', `/integrations/pbx/${id}/template`, { event: 'voicemail', text: 'Got it.', enabled: 'on' });
    expect(enabled.status).toBe(303);
    expect(cardOf((await owner.client.get('/integrations/pbx')).html, id)).toContain('missed_call, after_hours, voicemail, queue_callback');

    const empty = await owner.client.submit('/integrations/pbx', `/integrations/pbx/${id}/template`, { event: 'voicemail', text: '   ', enabled: 'on' });
    expect(empty.status).toBe(400);
    expect(empty.html).toContain('Write the message this event sends');
    const unknown = await owner.client.submit('/integrations/pbx', `/integrations/pbx/${id}/template`, { event: 'birthday', text: 'Hi' });
    expect(unknown.status).toBe(400);
    expect(unknown.html).toContain('Templates exist for missed_call, after_hours, voicemail, queue_callback.');
  });
});

describe('who may', () => {
  it('a viewer sees the integrations without forms, and gets 403 on every change', async () => {
    const viewer = await memberWithRole(app(), pool(), suite.fixture.box, account.customer_id, 'viewer');
    const page = await viewer.client.get('/integrations/pbx');
    expect(page.status).toBe(200);
    expect(page.html).toContain(`id="pbx-${account.pbx_integration_id}"`);
    expect(page.html).not.toContain('action="/integrations/pbx"');
    expect(page.html).not.toContain('rotate-secret');
    const csrf = field((await viewer.client.get('/account')).html, '_csrf')!;
    const id = account.pbx_integration_id;
    expect((await viewer.client.post('/integrations/pbx', { _csrf: csrf, instance_id: account.instance_id })).status).toBe(403);
    expect((await viewer.client.post(`/integrations/pbx/${id}/rotate-secret`, { _csrf: csrf, code: await totpNow(viewer.secret) })).status).toBe(403);
    expect((await viewer.client.post(`/integrations/pbx/${id}/template`, { _csrf: csrf, event: 'voicemail', text: 'x' })).status).toBe(403);
    expect(await pbxEvent(id, account.pbx_secret)).toBe(200);
  });

  it('another customer neither sees the integrations nor changes them (404, as for one that does not exist)', async () => {
    const { id, secret } = await create(owner);
    const stranger = await signUpWithMfa(app());
    const theirs = await stranger.client.get('/integrations/pbx');
    expect(theirs.status).toBe(200);
    expect(theirs.html).not.toContain(`id="pbx-${id}"`);
    expect(theirs.html).not.toContain(`/webhook/${id}`);
    expect(theirs.html).toContain('No PBX integrations yet');
    const rotate = await stranger.client.submit('/integrations/pbx', `/integrations/pbx/${id}/rotate-secret`, { code: await totpNow(stranger.secret) });
    expect(rotate.status).toBe(404);
    expect(rotate.html).toContain('No such PBX integration');
    expect((await stranger.client.submit('/integrations/pbx', `/integrations/pbx/${id}/template`, { event: 'voicemail', text: 'Hijacked.' })).status).toBe(404);
    for (const bad of ['999999999', 'abc', '-1']) expect((await stranger.client.submit('/integrations/pbx', `/integrations/pbx/${bad}/rotate-secret`, { code: '' })).status).toBe(404);
    expect(await pbxEvent(id, secret)).toBe(200);
    expect(cardOf((await owner.client.get('/integrations/pbx')).html, id)).not.toContain('Hijacked');
  });
});
