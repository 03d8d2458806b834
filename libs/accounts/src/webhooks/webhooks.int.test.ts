import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '@gw/config';
import { createPool, sql, z, type Pool } from '@gw/db';
import { EventCodec, Topics } from '@gw/events';
import { KafkaInspector } from '@gw/kafka';
import { SEAL_USES } from '@gw/security';
import { deliveryIdFor, resolveSubscription } from '@gw/webhooks';
import { isolate, type Isolation } from '../../../../test/support/infra.ts';
import { gatewayEventWriter } from '../../../../test/support/webhook-events.ts';
import { AccountError } from '../errors.ts';
import { customerRow, instanceOf, testBox } from '../testing.ts';
import {
  kafkaGatewayEventLog,
  listDeliveries,
  pauseWebhook,
  recoverDeliveries,
  resendDelivery,
  resumeWebhook,
  rotateWebhookSecret,
  setWebhook,
  showWebhook,
  WebhookError,
  type GatewayEventLog,
  type WebhookRefusal,
} from './index.ts';

// The webhook operations as the dashboard calls them, scoped to a customer: another customer's
// instance (or delivery) is refused exactly as one that does not exist. The operator's unscoped
// calls are exercised through gatewayctl (test/e2e/webhook-cli.e2e.test.ts).
let isolation: Isolation;
let pool: Pool;
let events: GatewayEventLog;
const box = testBox();
const PUBLIC_RULES = { allowCidrs: [] as string[], httpsOnly: false };
const RECEIVER = 'https://93.184.216.34/hooks/chat';
const NO_OVERLAP = { overlapMs: 0 };

beforeAll(async () => {
  isolation = await isolate();
  pool = await createPool(isolation.databaseUrl, { maxConnections: 3 });
  const config = loadConfig(isolation.env);
  const topics = new Topics(config.topicPrefix, config.topicPartitions);
  events = kafkaGatewayEventLog(new KafkaInspector(config.kafkaBrokers, config.topicPrefix), new EventCodec(config.schemaRegistryUrl, topics), topics.name('gatewayEvents'));
}, 120_000);

afterAll(async () => {
  await pool?.end();
  await isolation?.cleanup();
});

/** The refusal a call must end in. */
async function refused(work: Promise<unknown>): Promise<WebhookError> {
  const error = await work.then(() => null, (e: unknown) => e);
  expect(error).toBeInstanceOf(WebhookError);
  expect(error).toBeInstanceOf(AccountError);
  return error as WebhookError;
}

/** Its code, kind and message. */
async function refusal(work: Promise<unknown>): Promise<{ code: string; refusal: WebhookRefusal; message: string }> {
  const { code, refusal: kind, message } = await refused(work);
  return { code, refusal: kind, message };
}

async function customerWithWebhook(name: string) {
  const customerId = await customerRow(pool, name);
  const instance = await instanceOf(pool, box, customerId, `${name.toLowerCase()}-desk`);
  const saved = await setWebhook(pool, box, { instanceId: instance.instance_id, url: RECEIVER, events: ['recommended'], rules: PUBLIC_RULES, customerId });
  return { customerId, instanceId: instance.instance_id, secret: saved.signing_secret! };
}

/** A delivery row with attempts, as the webhooks service writes them. */
async function delivery(customerId: string, instanceId: string, eventId: string, state: 'delivered' | 'failed' | 'in_flight', attempts: Array<{ status: number; snippet: string }> = []) {
  const id = deliveryIdFor(eventId, instanceId);
  await pool.query(sql.typeAlias('void')`
    INSERT INTO webhook_deliveries (delivery_id, event_id, instance_id, customer_id, event, body, occurred_at, state, next_attempt_at, lease_until, attempts, round_attempts, last_status)
    VALUES (${id}, ${eventId}, ${instanceId}, ${customerId}, 'message.received', '{"event":"message.received"}', now(), ${state}, now() + interval '1 hour',
            ${state === 'in_flight' ? sql.fragment`now() + interval '2 minutes'` : null}, ${attempts.length}, ${attempts.length}, ${attempts.at(-1)?.status ?? null})`);
  for (const [n, a] of attempts.entries()) {
    await pool.query(sql.typeAlias('void')`
      INSERT INTO webhook_attempts (delivery_id, attempt, attempted_at, destination_url, status_code, latency_ms, response_snippet, error, outcome, next_attempt_at)
      VALUES (${id}, ${n + 1}, now(), ${RECEIVER}, ${a.status}, ${100 + n}, ${a.snippet}, ${a.status >= 400 ? `http_${a.status}` : null}, ${a.status < 300 ? 'delivered' : 'retry'}, null)`);
  }
  return id;
}

const State = z.object({ state: z.string() });

describe('webhook operations scoped to a customer', () => {
  it("configure, show, rotate, pause and resume the customer's own webhook; the secret only when created or rotated", async () => {
    const { customerId, instanceId, secret } = await customerWithWebhook('Acme');
    expect(secret).toMatch(/^whsec_/);
    const scope = { customerId };
    const shown = await showWebhook(pool, instanceId, scope);
    expect(shown).toMatchObject({ instance_id: instanceId, destination_url: RECEIVER, events: resolveSubscription(['recommended']), status: 'active', deliveries: { pending: 0, in_flight: 0, delivered: 0, failed: 0 } });
    expect(JSON.stringify(shown)).not.toContain('whsec_');
    const updated = await setWebhook(pool, box, { instanceId, url: `${RECEIVER}/v2`, events: ['message.received', 'call'], rules: PUBLIC_RULES, customerId });
    expect(updated).toEqual({ instance_id: instanceId, destination_url: `${RECEIVER}/v2`, events: resolveSubscription(['message.received', 'call']), status: 'active' });
    const rotated = await rotateWebhookSecret(pool, box, instanceId, scope, NO_OVERLAP);
    expect(rotated.signing_secret).toMatch(/^whsec_/);
    expect(rotated.signing_secret).not.toBe(secret);
    expect(rotated.previous_secret_expires_at).toBeNull();
    expect(await pauseWebhook(pool, instanceId, scope)).toMatchObject({ status: 'paused', previous_status: 'active' });
    expect(await resumeWebhook(pool, instanceId, scope)).toMatchObject({ status: 'active', previous_status: 'paused' });
  });

  it('rotating with an overlap keeps the replaced secret sealed beside the new one until the overlap ends; a second rotation keeps only the newest two', async () => {
    const { customerId, instanceId, secret } = await customerWithWebhook('Rotator');
    const Secrets = z.object({ signing_secret_enc: z.string(), previous_signing_secret_enc: z.string().nullable(), previous_secret_expires_at: z.date().nullable(), secret_rotated_at: z.date() });
    const stored = () => pool.one(sql.type(Secrets)`SELECT signing_secret_enc, previous_signing_secret_enc, previous_secret_expires_at, secret_rotated_at FROM webhook_endpoints WHERE instance_id = ${instanceId}`);
    const day = 24 * 3_600_000;

    const first = await rotateWebhookSecret(pool, box, instanceId, { customerId }, { overlapMs: day });
    let row = await stored();
    expect(row.previous_signing_secret_enc).not.toContain(secret); // sealed at rest, like the current one
    expect(box.open(row.previous_signing_secret_enc!, SEAL_USES.webhookSigningSecret(instanceId))).toBe(secret);
    expect(box.open(row.signing_secret_enc, SEAL_USES.webhookSigningSecret(instanceId))).toBe(first.signing_secret);
    expect(row.previous_secret_expires_at!.getTime() - row.secret_rotated_at.getTime()).toBe(day);
    expect(first.previous_secret_expires_at).toBe(row.previous_secret_expires_at!.toISOString());

    const second = await rotateWebhookSecret(pool, box, instanceId, { customerId }, { overlapMs: day });
    row = await stored();
    expect(box.open(row.previous_signing_secret_enc!, SEAL_USES.webhookSigningSecret(instanceId))).toBe(first.signing_secret);
    expect(box.open(row.signing_secret_enc, SEAL_USES.webhookSigningSecret(instanceId))).toBe(second.signing_secret);

    await rotateWebhookSecret(pool, box, instanceId, { customerId }, NO_OVERLAP);
    row = await stored();
    expect(row).toMatchObject({ previous_signing_secret_enc: null, previous_secret_expires_at: null });
    expect(await refusal(rotateWebhookSecret(pool, box, instanceId, { customerId }, { overlapMs: -1 }))).toMatchObject({ refusal: 'invalid_input' });
  });

  it('two first saves of one webhook at once both answer: the later one updates what the earlier created (no unique-key error)', async () => {
    const customerId = await customerRow(pool, 'Twice');
    const instance = await instanceOf(pool, box, customerId, 'twice-desk');
    const save = (url: string) => setWebhook(pool, box, { instanceId: instance.instance_id, url, events: ['recommended'], rules: PUBLIC_RULES, customerId });
    const saved = await Promise.all([save(`${RECEIVER}/a`), save(`${RECEIVER}/b`), save(`${RECEIVER}/c`)]);
    // Exactly one of them created the endpoint (and got its secret, shown once).
    expect(saved.filter((s) => s.signing_secret !== undefined)).toHaveLength(1);
    const shown = await showWebhook(pool, instance.instance_id, { customerId });
    expect([`${RECEIVER}/a`, `${RECEIVER}/b`, `${RECEIVER}/c`]).toContain(shown.destination_url);
  });

  it("refuses another customer's instance, and a deleted one, exactly as an unknown instance", async () => {
    const a = await customerWithWebhook('Owner');
    const b = await customerRow(pool, 'Stranger');
    const delivered = await delivery(a.customerId, a.instanceId, 'evt-scope-1', 'delivered', [{ status: 200, snippet: 'ok' }]);
    const asB = { customerId: b };
    const unknown = { code: 'not_found', refusal: 'no_instance', message: `No instance ${a.instanceId}.` };
    expect(await refusal(setWebhook(pool, box, { instanceId: a.instanceId, url: RECEIVER, events: ['all'], rules: PUBLIC_RULES, customerId: b }))).toEqual(unknown);
    expect(await refusal(showWebhook(pool, a.instanceId, asB))).toEqual(unknown);
    expect(await refusal(rotateWebhookSecret(pool, box, a.instanceId, asB, NO_OVERLAP))).toEqual(unknown);
    expect(await refusal(pauseWebhook(pool, a.instanceId, asB))).toEqual(unknown);
    expect(await refusal(resumeWebhook(pool, a.instanceId, asB))).toEqual(unknown);
    expect(await refusal(listDeliveries(pool, { instanceId: a.instanceId, customerId: b }))).toEqual(unknown);
    expect(await refusal(recoverDeliveries({ pool, events }, { instanceId: a.instanceId, since: new Date(), customerId: b }))).toEqual(unknown);
    expect(await refusal(resendDelivery(pool, delivered, asB))).toMatchObject({ code: 'not_found', refusal: 'no_delivery' });
    // Nothing changed for the owner.
    expect((await showWebhook(pool, a.instanceId, { customerId: a.customerId })).status).toBe('active');
    expect(await pool.oneFirst(sql.type(State)`SELECT state FROM webhook_deliveries WHERE delivery_id = ${delivered}`)).toBe('delivered');

    const gone = await instanceOf(pool, box, a.customerId, 'gone-desk');
    await setWebhook(pool, box, { instanceId: gone.instance_id, url: RECEIVER, events: ['all'], rules: PUBLIC_RULES, customerId: a.customerId });
    // As deleteInstance leaves it (its manager here is nowhere, so it is marked directly).
    await pool.query(sql.typeAlias('void')`UPDATE instances SET deleted_at = now() WHERE id = ${gone.instance_id}`);
    expect((await refusal(showWebhook(pool, gone.instance_id, { customerId: a.customerId }))).refusal).toBe('no_instance');
  });

  it('lists deliveries with every attempt, and resends only a delivery of the instance named', async () => {
    const { customerId, instanceId } = await customerWithWebhook('Logs');
    const other = await instanceOf(pool, box, customerId, 'logs-other');
    await setWebhook(pool, box, { instanceId: other.instance_id, url: RECEIVER, events: ['all'], rules: PUBLIC_RULES, customerId });
    const failed = await delivery(customerId, instanceId, 'evt-log-1', 'failed', [{ status: 503, snippet: 'busy' }, { status: 500, snippet: '<b>broken</b>' }]);
    const listed = await listDeliveries(pool, { instanceId, customerId });
    expect(listed).toHaveLength(1);
    expect(listed[0]).toMatchObject({ delivery_id: failed, state: 'failed', attempts: 2, last_status: 500 });
    expect(listed[0]!.attempts_log.map((a) => [a.attempt, a.status_code, a.latency_ms, a.response_snippet])).toEqual([[1, 503, 100, 'busy'], [2, 500, 101, '<b>broken</b>']]);

    expect((await refusal(resendDelivery(pool, failed, { customerId, instanceId: other.instance_id }))).refusal).toBe('no_delivery');
    expect(await resendDelivery(pool, failed, { customerId, instanceId })).toMatchObject({ delivery_id: failed, state: 'pending', attempts: 2 });
    const inFlight = await delivery(customerId, instanceId, 'evt-log-2', 'in_flight');
    expect(await refusal(resendDelivery(pool, inFlight, { customerId, instanceId }))).toMatchObject({ code: 'conflict', refusal: 'in_flight' });
  });

  it('lists a delivery and its attempts as of one moment, even while the worker records an attempt between the two reads', async () => {
    const { customerId, instanceId } = await customerWithWebhook('Snapshot');
    const sending = await delivery(customerId, instanceId, 'evt-snap-1', 'in_flight');
    // The worker records the attempt and the delivery's new state in one transaction, right after
    // the deliveries are read and before their attempts are.
    const recordAttempt = () =>
      pool.transaction(async (tx) => {
        await tx.query(sql.typeAlias('void')`
          INSERT INTO webhook_attempts (delivery_id, attempt, attempted_at, destination_url, status_code, latency_ms, response_snippet, error, outcome, next_attempt_at)
          VALUES (${sending}, 1, now(), ${RECEIVER}, 200, 12, 'ok', null, 'delivered', null)`);
        await tx.query(sql.typeAlias('void')`UPDATE webhook_deliveries SET state = 'delivered', attempts = 1, lease_until = NULL WHERE delivery_id = ${sending}`);
      });
    let recorded = false;
    const afterDeliveriesRead = <Q extends object>(db: Q): Q =>
      new Proxy(db, {
        get(target, name, receiver) {
          const value = Reflect.get(target, name, receiver);
          if (name === 'any')
            return async (query: { sql: string }) => {
              const rows = await (value as (q: unknown) => Promise<unknown>).call(target, query);
              if (!recorded && query.sql.includes('FROM webhook_deliveries')) {
                recorded = true;
                await recordAttempt();
              }
              return rows;
            };
          if (name === 'transaction') return (work: (tx: object) => Promise<unknown>) => (value as (w: unknown) => Promise<unknown>).call(target, (tx: object) => work(afterDeliveriesRead(tx)));
          return typeof value === 'function' ? value.bind(target) : value;
        },
      });

    const [listed] = await listDeliveries(afterDeliveriesRead(pool), { instanceId, customerId });
    expect(recorded).toBe(true);
    expect({ state: listed!.state, attempts: listed!.attempts_log.length }).toEqual({ state: 'in_flight', attempts: 0 });
    const [after] = await listDeliveries(pool, { instanceId, customerId });
    expect({ state: after!.state, attempts: after!.attempts_log.map((a) => a.outcome) }).toEqual({ state: 'delivered', attempts: ['delivered'] });
  });

  it('says what was refused and why, in words that name no tool, with the details a caller words its own way', async () => {
    const customerId = await customerRow(pool, 'Words');
    const { instance_id: instanceId } = await instanceOf(pool, box, customerId, 'words-desk');
    const set = (url: string, words: string[], rules = PUBLIC_RULES) => setWebhook(pool, box, { instanceId, url, events: words, rules, customerId });

    const blocked = await refused(set('http://10.1.2.3/hook', ['recommended']));
    expect(blocked).toMatchObject({ code: 'invalid', refusal: 'destination_refused' });
    expect(blocked.message).toBe('Webhook URL refused (destination_blocked): destination address 10.1.2.3, which is not a public internet address: 10.1.2.3 is in 10.0.0.0/8, private network (RFC 1918).');
    expect(blocked.details.destination).toMatchObject({ code: 'destination_blocked', details: { blocked: [{ address: '10.1.2.3', category: 'private', range: '10.0.0.0/8' }] } });
    expect((await refused(set('http://93.184.216.34/hook', ['recommended'], { allowCidrs: [], httpsOnly: true }))).details.destination?.code).toBe('https_required');
    const unknownEvent = await refused(set(RECEIVER, ['message.recieved']));
    expect(unknownEvent).toMatchObject({ code: 'invalid', refusal: 'events_refused' });
    expect(unknownEvent.details.subscription?.unknown).toEqual(['message.recieved']);

    const none = await refusal(showWebhook(pool, instanceId, { customerId }));
    expect(none).toEqual({ code: 'not_found', refusal: 'no_webhook', message: `Instance ${instanceId} has no webhook.` });
    await set(RECEIVER, ['recommended']);
    await pool.query(sql.typeAlias('void')`UPDATE webhook_endpoints SET status = 'disabled', disabled_reason = 'gone', disabled_at = now() WHERE instance_id = ${instanceId}`);
    const failed = await delivery(customerId, instanceId, 'evt-words-1', 'failed');
    const disabled = await refused(resendDelivery(pool, failed, { customerId, instanceId }));
    expect(disabled).toMatchObject({ code: 'conflict', refusal: 'disabled', details: { instanceId, disabledReason: 'gone', doing: 'a resend' } });
    expect(disabled.message).toBe(`The webhook of instance ${instanceId} is disabled (gone), so a resend would deliver nothing; resume it first.`);
    expect(disabled.message).not.toContain('gatewayctl');
  });
});

describe('recovering from the gateway-events log', () => {
  it("re-queues the instance's subscribed events since a time, read from Kafka, once", async () => {
    const { customerId, instanceId } = await customerWithWebhook('Recover');
    const writer = await gatewayEventWriter(isolation.env);
    try {
      const since = new Date(Date.now() - 60_000);
      const item = (event: 'message.received' | 'message.sent' | 'call.missed', at: Date, id = instanceId) => ({ customerId, instanceId: id, instanceName: 'recover-desk', event, at });
      const emitted = await writer.emit([
        item('message.received', new Date(since.getTime() + 1000)),
        item('message.sent', new Date(since.getTime() + 2000)),
        item('call.missed', new Date(since.getTime() + 3000)), // not subscribed (recommended only)
        item('message.received', new Date(since.getTime() - 30_000)), // before since
        item('message.received', new Date(since.getTime() + 4000), 'ins_someone_else'),
      ]);
      const first = await recoverDeliveries({ pool, events }, { instanceId, since, customerId });
      expect(first).toMatchObject({ instance_id: instanceId, scanned: 2, queued: 2, requeued: 0, skipped: 0 });
      expect(first.records_read).toBeGreaterThanOrEqual(emitted.length);
      const queued = await pool.anyFirst(sql.type(z.object({ event_id: z.string() }))`SELECT event_id FROM webhook_deliveries WHERE instance_id = ${instanceId} AND state = 'pending' ORDER BY occurred_at`);
      expect(queued).toEqual([emitted[0]!.event_id, emitted[1]!.event_id]);
      expect(await recoverDeliveries({ pool, events }, { instanceId, since, customerId })).toMatchObject({ scanned: 2, queued: 0, skipped: 2 });
    } finally {
      await writer.close();
    }
  });
});
