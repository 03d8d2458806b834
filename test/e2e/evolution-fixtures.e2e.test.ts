// The whole pipeline over the Evolution API webhook fixtures of each supported version
// (test/fixtures/evolution/<version>/, docs/evolution-compatibility.md): each envelope is posted to
// the real ingest (POST /integrations/instances/:id/events, the token in Authorization) of a running stack, and the
// customer's webhook receiver must get exactly the events the fixture states in `expect`. Then the
// opt-out chain: an @lid-only STOP, later a message that links that lid to a phone, and a send to
// the phone is refused as suppressed. Failures name the fixture and the expectation.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setWebhook } from '@gw/accounts';
import { createPool, sql, z, type Pool } from '@gw/db';
import { SecretBox } from '@gw/security';
import { startWebhookReceiver, type WebhookReceiver } from '../../services/instance-simulator/src/testing/webhook-receiver.ts';
import { loadFixtures, SUPPORTED_VERSIONS, type LoadedFixture } from '../fixtures/evolution/load.ts';
import { demoAccount, type DemoAccount } from '../support/accounts.ts';
import { send } from '../support/http.ts';
import { startStack, type Stack } from '../support/stack.ts';
import { compareDelivered, expectedEvents, idsNamedBy, withIdsReplaced, type Delivered } from './evolution-fixture-events.ts';

// Customer webhooks to a loopback receiver, polled often: the same code paths, in test time.
const ENV = { WEBHOOK_ALLOW_CIDRS: '127.0.0.0/8', WEBHOOK_POLL_MS: '100', WEBHOOK_RETRY_JITTER: '0' };
const DESTINATION_RULES = { allowCidrs: ['127.0.0.0/8'], httpsOnly: false };
/** How long the expected events may take through ingest → instance-events → webhooks. */
const ARRIVAL_TIMEOUT_MS = 30_000;
/** After the last expected event: time for an unexpected one posted before it to show up as well. */
const SETTLE_MS = 750;

/**
 * Besides every messages.upsert fixture (each received message must give its event): the other
 * kinds that name a message or a chat. connection/qrcode/status fixtures are left out: they would
 * change the instance's connection, which the simulator's own pairing reports concurrently.
 */
const OTHER_FIXTURES = [
  'update-read-not-from-me',
  'update-read-from-me',
  'update-delivery-ack-from-me',
  'chats-upsert',
  'chats-upsert-row-id',
  'chats-upsert-after-update',
  'call-offer-lid',
  'message-deleted',
  'message-edited',
];

const fixtures = loadFixtures();
const fixtureOf = (version: string, name: string): LoadedFixture => {
  const found = fixtures.find((f) => f.version === version && f.name === name);
  if (!found) throw new Error(`fixture ${version}/${name}.json is missing`);
  return found;
};

let stack: Stack;
let db: Pool;
let box: SecretBox;
let receiver: WebhookReceiver;

beforeAll(async () => {
  [stack, receiver] = await Promise.all([startStack(['api', 'policy', 'delivery', 'instance-events', 'webhooks'], ENV), startWebhookReceiver()]);
  db = await createPool(stack.isolation.databaseUrl, { maxConnections: 2 });
  box = new SecretBox(stack.env.GATEWAY_SECRET_KEY!);
}, 180_000);

afterAll(async () => {
  await receiver?.close();
  await db?.end();
  await stack?.stop();
});

interface Customer {
  account: DemoAccount;
  /** The ingest URL the manager holds for the instance, and the headers it posts with (the token). */
  ingestUrl: string;
  ingestHeaders: Record<string, string>;
}

/** A fresh customer and instance (one per version: the ingest deduplicates identical bodies per instance), with a webhook for every event. */
async function customerWithWebhook(): Promise<Customer> {
  const account = await demoAccount(stack);
  await setWebhook(db, box, { instanceId: account.instance_id, url: `${receiver.url}/hooks/${account.instance_id}`, events: ['all'], rules: DESTINATION_RULES });
  const manager = await db.oneFirst(sql.type(z.object({ manager_instance: z.string() }))`SELECT manager_instance FROM instances WHERE id = ${account.instance_id}`);
  const hook = await stack.simulator.call('GET', `/webhook/find/${manager}`, {});
  expect(hook.status, JSON.stringify(hook.body)).toBe(200);
  const held = hook.body as { url: string; headers: Record<string, string> | null };
  return { account, ingestUrl: held.url, ingestHeaders: held.headers ?? {} };
}

/** Posts an envelope as Evolution does; a problem line naming the fixture unless it was accepted. */
async function post(customer: Customer, title: string, envelope: unknown, accepted = true): Promise<string | null> {
  const response = await fetch(customer.ingestUrl, { method: 'POST', headers: { ...customer.ingestHeaders, 'content-type': 'application/json' }, body: JSON.stringify(envelope) });
  const text = await response.text();
  if (accepted && response.status === 200 && text === JSON.stringify({ success: true, status: 'accepted' })) return null;
  if (!accepted && response.status === 400) return null;
  return `${title}: the ingest answered ${response.status} ${text.slice(0, 300)} (wanted ${accepted ? '200 accepted' : '400'})`;
}

/**
 * What the customer's receiver got for this instance. instance.* events are left out: the
 * simulator's pairing reports them, and no fixture posted here gives one.
 */
const deliveredTo = (account: DemoAccount) =>
  receiver.accepted().filter((hook) => hook.body?.instance_id === account.instance_id && !String(hook.body.event).startsWith('instance.'));

/** Waits (bounded) until a delivered event matches; the error names what was awaited and lists what came. */
async function waitDelivered(account: DemoAccount, match: (body: Delivered) => boolean, what: string): Promise<Delivered> {
  const deadline = Date.now() + ARRIVAL_TIMEOUT_MS;
  for (;;) {
    const found = deliveredTo(account).find((hook) => match(hook.body as Delivered));
    if (found) return found.body as Delivered;
    if (Date.now() > deadline) {
      const seen = deliveredTo(account).map((hook) => `${hook.body.event} from=${hook.body.from ?? '-'} from_lid=${hook.body.from_lid ?? '-'}`);
      throw new Error(`timed out waiting for ${what}; the receiver got ${JSON.stringify(seen)}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}

const sendTo = (account: DemoAccount, phone: string) =>
  send(stack.apiUrl, account.api_key, { instance_id: account.instance_id, phone, message: 'Your order has shipped.', message_purpose: 'transactional' });

describe.each(SUPPORTED_VERSIONS.map((version, index) => [version, index] as const))('Evolution API %s fixtures through the whole pipeline', (version, index) => {
  it('every received message gives its event with from/from_lid, media and chats are taken, nothing is invented', async () => {
    const subset = fixtures.filter((f) => f.version === version && (f.envelope.event === 'messages.upsert' || OTHER_FIXTURES.includes(f.name)));
    for (const name of OTHER_FIXTURES) fixtureOf(version, name);
    expect(subset.filter((f) => f.envelope.event === 'messages.upsert').length, `${version}: messages.upsert fixtures`).toBeGreaterThanOrEqual(8);
    const customer = await customerWithWebhook();

    // The fixtures that give no event go first, so anything they wrongly give is delivered before
    // the last expected event is, and the settle time after it is only a margin.
    const silent = subset.filter((f) => f.fixture.expect.events.length === 0);
    const rest = subset.filter((f) => f.fixture.expect.events.length > 0);
    const problems: string[] = [];
    for (const f of silent) problems.push(...[await post(customer, f.title, f.envelope, f.fixture.expect.accepted)].filter((p): p is string => p !== null));
    problems.push(...(await Promise.all(rest.map((f) => post(customer, f.title, f.envelope, f.fixture.expect.accepted)))).filter((p): p is string => p !== null));

    const expected = subset.flatMap(expectedEvents);
    const fixtureIds = new Map(subset.map((f) => [f.title, idsNamedBy(f)]));
    const compare = () => compareDelivered(expected, deliveredTo(customer.account).map((hook) => hook.body as Delivered), fixtureIds);
    const deadline = Date.now() + ARRIVAL_TIMEOUT_MS;
    let result = compare();
    while (!result.complete && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 100));
      result = compare();
    }
    if (result.complete) {
      await new Promise((r) => setTimeout(r, SETTLE_MS));
      result = compare();
    }
    problems.push(...result.problems);

    // The photo's bytes (message.base64, ~90 kB) are taken at the ingest and never forwarded: the
    // customer gets the caption in a small body.
    const media = fixtureOf(version, 'image-caption-base64');
    const mediaId = (media.envelope.data as { key: { id: string } }).key.id;
    const mediaHook = deliveredTo(customer.account).find((hook) => hook.body.event === 'message.received' && hook.body.external_message_id === mediaId);
    if (mediaHook && mediaHook.raw.length > 4096) problems.push(`${media.title}: message.received body is ${mediaHook.raw.length} bytes; the media bytes were forwarded`);

    expect(problems, `${version}: each line names a fixture and what went wrong`).toEqual([]);
  });

  it('an @lid-only STOP suppresses the phone that lid is later linked to; other phones still get messages', async () => {
    const stop = fixtureOf(version, 'stop-lid-only');
    const lid = stop.fixture.expect.optOut;
    expect(lid, `${stop.title}: expect.optOut is the lid`).toMatch(/^\d+@lid$/);
    // A direct message naming both the lid and the phone (2.3.7's lid-with-phone lost the lid).
    const link = [fixtureOf(version, 'lid-with-phone'), fixtureOf(version, 'text-phone-with-lid')].find((f) => f.fixture.expect.link)!;
    expect(link, `${version}: a direct-message fixture with expect.link`).toBeDefined();
    const phone = `+1415555${4100 + index}`;
    const unrelated = `+1415555${4200 + index}`;
    const stated = link.fixture.expect.link!;
    // The same envelope, about the person who sent the STOP, at a number no other test uses.
    const linking = withIdsReplaced(link, { [stated.lid.replace('@lid', '')]: lid!.replace('@lid', ''), [stated.phone.slice(1)]: phone.slice(1) });
    expect(JSON.stringify(linking), `${link.title}: every id was replaced`).not.toContain(stated.phone.slice(1));
    const customer = await customerWithWebhook();

    expect(await post(customer, stop.title, stop.envelope)).toBeNull();
    await waitDelivered(customer.account, (e) => e.event === 'recipient.opted_out' && e.from === lid, `${stop.title}: recipient.opted_out from ${lid}`);
    // Nothing ties the phone to the lid yet: it is not suppressed.
    const before = await sendTo(customer.account, phone);
    expect(before.status, `send to the phone before any link: ${JSON.stringify(before.body)}`).toBe(200);

    expect(await post(customer, `${link.title} (ids of ${stop.title})`, linking)).toBeNull();
    await waitDelivered(customer.account, (e) => e.event === 'message.received' && e.from === phone && e.from_lid === lid, `${link.title} (adapted): message.received from ${phone} with from_lid ${lid}`);

    const refused = await sendTo(customer.account, phone);
    expect(refused.status, `send to the phone now linked to the opted-out lid: ${JSON.stringify(refused.body)}`).toBe(403);
    expect(refused.body.error, 'the refusal code').toBe('recipient_suppressed');

    const other = await sendTo(customer.account, unrelated);
    expect(other.status, `send to an unrelated phone: ${JSON.stringify(other.body)}`).toBe(200);
  });
});
