// `gatewayctl webhook …` and `demo --webhook-url` against a real database and Kafka. The webhooks
// service is not running here, so queued deliveries stay pending and are easy to assert.
import { describe, expect, it } from 'vitest';
import { Kafka, logLevel } from 'kafkajs';
import { loadConfig } from '@gw/config';
import { sql, z } from '@gw/db';
import { EventCodec, Topics, type GatewayEventEmitted } from '@gw/events';
import { KafkaClient, type OutgoingRecord } from '@gw/kafka';
import { createLogger } from '@gw/observability';
import { SEAL_USES, SecretBox } from '@gw/security';
import { createSsrfGuard, deliveryIdFor, resolveSubscription } from '@gw/webhooks';
import { demoAccount, type DemoAccount } from '../support/accounts.ts';
import { gatewayctl } from '../support/cli.ts';
import { useStack } from '../support/suite.ts';

// No gateway service is needed: demo accounts are made directly, and the CLI talks to Postgres and Kafka.
const suite = useStack({ services: [] });

/** A loopback test receiver is accepted only when the deployment allowlists it. */
const LOOPBACK_ALLOWED = { WEBHOOK_ALLOW_CIDRS: '127.0.0.0/8', WEBHOOK_HTTPS_ONLY: 'false' };
const PRODUCTION_RULES = { WEBHOOK_ALLOW_CIDRS: '', WEBHOOK_HTTPS_ONLY: 'false' };
const RECEIVER = 'http://127.0.0.1:18999/hooks/chat';
const SECRET_FORMAT = /^whsec_[A-Za-z0-9_-]{43}$/;

const cli = (rules: Record<string, string>, ...args: string[]) => gatewayctl({ ...suite.stack.env, PUBLIC_BASE_URL: suite.stack.apiUrl, ...rules }, ...args);

/** Runs a command that must succeed and returns its --json output. */
async function ok(rules: Record<string, string>, ...args: string[]) {
  const out = await cli(rules, ...args, '--json');
  expect(out.code, `${args.join(' ')}: ${out.stdout}${out.stderr}`).toBe(0);
  return JSON.parse(out.stdout);
}

/** Runs a command that must fail and returns its one-line error (printed to stderr without --json). */
async function refused(rules: Record<string, string>, ...args: string[]): Promise<string> {
  const out = await cli(rules, ...args);
  expect(out.code, out.stdout).toBe(1);
  expect(out.stdout).toBe('');
  expect(out.stderr).not.toMatch(/^\s+at /m); // never a stack trace
  const lines = out.stderr.trim().split('\n');
  expect(lines).toHaveLength(1);
  return lines[0]!;
}

/** The guard's own sentence for a refused URL, which the CLI must pass on. */
async function guardMessage(url: string): Promise<string> {
  const error = await createSsrfGuard({}).checkDestination(url).then(() => null, (e: Error) => e);
  if (!error) throw new Error(`${url} was expected to be refused`);
  return error.message;
}

const box = () => new SecretBox(suite.stack.env.GATEWAY_SECRET_KEY!);

// The stored rows, with the columns these tests look at.
const StoredEndpoint = z.object({
  customer_id: z.string(),
  destination_url: z.string(),
  events: z.array(z.string()),
  status: z.string(),
  disabled_reason: z.string().nullable(),
  disabled_at: z.date().nullable(),
  signing_secret_enc: z.string(),
  secret_rotated_at: z.date(),
  failing_since: z.date().nullable(),
  consecutive_failures: z.number(),
  last_success_at: z.date().nullable(),
});
const StoredDelivery = z.object({
  event_id: z.string(),
  instance_id: z.string(),
  customer_id: z.string(),
  event: z.string(),
  body: z.string(),
  occurred_at: z.date(),
  state: z.string(),
  next_attempt_at: z.date(),
  lease_until: z.date().nullable(),
  attempts: z.number(),
  round_attempts: z.number(),
});

/** The endpoint row, or undefined when there is none. */
async function endpointRow(instanceId: string) {
  return (await suite.db.maybeOne(sql.type(StoredEndpoint)`SELECT * FROM webhook_endpoints WHERE instance_id = ${instanceId}`)) ?? undefined;
}

/** The delivery row, or undefined when there is none. */
async function deliveryRow(deliveryId: string) {
  return (await suite.db.maybeOne(sql.type(StoredDelivery)`SELECT * FROM webhook_deliveries WHERE delivery_id = ${deliveryId}`)) ?? undefined;
}

const timestamptz = (time: Date | null) => (time ? sql.fragment`${time.toISOString()}::timestamptz` : null);

async function withWebhook(events = 'recommended'): Promise<DemoAccount> {
  const account = await demoAccount(suite.stack);
  await ok(LOOPBACK_ALLOWED, 'webhook', 'set', '--instance', account.instance_id, '--url', RECEIVER, '--events', events);
  return account;
}

interface DeliveryFixture {
  eventId: string;
  event?: string;
  state: 'pending' | 'in_flight' | 'delivered' | 'failed';
  createdAt: Date;
  attempts?: number;
  lastStatus?: number | null;
  lastError?: string | null;
  leaseUntil?: Date | null;
}

/** A delivery row as the webhooks service would have written it. */
async function insertDelivery(account: DemoAccount, d: DeliveryFixture): Promise<string> {
  const id = deliveryIdFor(d.eventId, account.instance_id);
  const event = d.event ?? 'message.received';
  const createdAt = timestamptz(d.createdAt);
  const attempts = d.attempts ?? 0;
  await suite.db.query(sql.typeAlias('void')`
    INSERT INTO webhook_deliveries (delivery_id, event_id, instance_id, customer_id, event, body, occurred_at, state, next_attempt_at,
                                    lease_until, attempts, round_attempts, last_status, last_error, created_at, updated_at)
    VALUES (${id}, ${d.eventId}, ${account.instance_id}, ${account.customer_id}, ${event}, ${`{"event":"${event}"}`}, ${createdAt}, ${d.state},
            ${timestamptz(new Date(d.createdAt.getTime() + 3_600_000))}, ${timestamptz(d.leaseUntil ?? null)}, ${attempts}, ${attempts},
            ${d.lastStatus ?? null}, ${d.lastError ?? null}, ${createdAt}, ${createdAt})`);
  return id;
}

describe('gatewayctl webhook', () => {
  it('set creates an active endpoint and shows its whsec_ secret once; a second set updates it and keeps the secret', async () => {
    const account = await demoAccount(suite.stack);
    const created = await ok(LOOPBACK_ALLOWED, 'webhook', 'set', '--instance', account.instance_id, '--url', RECEIVER, '--events', 'recommended,call.missed');
    expect(created).toEqual({
      instance_id: account.instance_id,
      destination_url: RECEIVER,
      events: resolveSubscription(['recommended', 'call.missed']),
      status: 'active',
      signing_secret: expect.stringMatching(SECRET_FORMAT),
    });
    const stored = (await endpointRow(account.instance_id))!;
    expect(stored).toMatchObject({ customer_id: account.customer_id, status: 'active', events: created.events });
    expect(stored.signing_secret_enc).not.toContain(created.signing_secret); // sealed, not in clear
    expect(box().open(stored.signing_secret_enc, SEAL_USES.webhookSigningSecret(account.instance_id))).toBe(created.signing_secret);

    const updated = await ok(LOOPBACK_ALLOWED, 'webhook', 'set', '--instance', account.instance_id, '--url', `${RECEIVER}/v2`, '--events', 'instance,message.received');
    expect(updated).toEqual({ instance_id: account.instance_id, destination_url: `${RECEIVER}/v2`, events: resolveSubscription(['instance', 'message.received']), status: 'active' });
    expect((await endpointRow(account.instance_id))!.signing_secret_enc).toBe(stored.signing_secret_enc);

    // The person-readable form prints the secret as a key: value line, once.
    const other = await demoAccount(suite.stack);
    const human = await cli(LOOPBACK_ALLOWED, 'webhook', 'set', '--instance', other.instance_id, '--url', RECEIVER, '--events', 'all');
    expect(human.code, human.stderr).toBe(0);
    expect(human.stdout).toMatch(/^signing_secret\s+whsec_\S{43}$/m);
    expect(human.stdout).toMatch(/^status\s+active$/m);
  });

  it('refuses unknown event words, naming them', async () => {
    const account = await demoAccount(suite.stack);
    const line = await refused(LOOPBACK_ALLOWED, 'webhook', 'set', '--instance', account.instance_id, '--url', RECEIVER, '--events', 'recommended,message.recieved,bogus');
    expect(line).toContain('"message.recieved" (did you mean "message.received"?)');
    expect(line).toContain('"bogus"');
    const json = await cli(LOOPBACK_ALLOWED, 'webhook', 'set', '--instance', account.instance_id, '--url', RECEIVER, '--events', 'bogus', '--json');
    expect(json.code).toBe(1);
    expect(JSON.parse(json.stdout).error).toContain('"bogus"');
    expect(await endpointRow(account.instance_id)).toBeUndefined();
  });

  it("refuses private, metadata, loopback (unless allowlisted), credentialed and non-http destinations with the guard's message", async () => {
    const account = await demoAccount(suite.stack);
    const set = (rules: Record<string, string>, url: string) => refused(rules, 'webhook', 'set', '--instance', account.instance_id, '--url', url, '--events', 'recommended');
    for (const url of ['http://10.1.2.3/hook', 'http://169.254.169.254/', RECEIVER, 'https://user:pw@93.184.216.34/hook', 'ftp://93.184.216.34/hook']) {
      const line = await set(PRODUCTION_RULES, url);
      expect(line).toContain(await guardMessage(url));
    }
    expect(await set(PRODUCTION_RULES, 'http://10.1.2.3/hook')).toContain('(destination_blocked)');
    expect(await set(PRODUCTION_RULES, 'http://169.254.169.254/')).toContain('169.254.169.254 is in 169.254.0.0/16');
    expect(await set({ ...PRODUCTION_RULES, WEBHOOK_HTTPS_ONLY: 'true' }, 'http://93.184.216.34/hook')).toContain('webhook URL must use https://');
    // The allowlist opens loopback only, not other private ranges.
    expect(await set(LOOPBACK_ALLOWED, 'http://10.1.2.3/hook')).toContain('10.1.2.3 is in 10.0.0.0/8');
    expect(await endpointRow(account.instance_id)).toBeUndefined();

    expect(await refused(LOOPBACK_ALLOWED, 'webhook', 'set', '--instance', 'ins_missing', '--url', RECEIVER, '--events', 'all')).toBe('No instance ins_missing.');
    expect(await refused(LOOPBACK_ALLOWED, 'webhook', 'show', '--instance', account.instance_id)).toContain(`Instance ${account.instance_id} has no webhook`);
  });

  it('rotate-secret issues a different secret once and reseals the stored one', async () => {
    const account = await demoAccount(suite.stack);
    const created = await ok(LOOPBACK_ALLOWED, 'webhook', 'set', '--instance', account.instance_id, '--url', RECEIVER, '--events', 'all');
    const before = (await endpointRow(account.instance_id))!;
    const rotated = await ok(LOOPBACK_ALLOWED, 'webhook', 'rotate-secret', '--instance', account.instance_id);
    expect(rotated).toEqual({ instance_id: account.instance_id, signing_secret: expect.stringMatching(SECRET_FORMAT), secret_rotated_at: expect.any(String), previous_secret_expires_at: expect.any(String) });
    expect(rotated.signing_secret).not.toBe(created.signing_secret);
    const after = (await endpointRow(account.instance_id))!;
    expect(after.signing_secret_enc).not.toBe(before.signing_secret_enc);
    expect(box().open(after.signing_secret_enc, SEAL_USES.webhookSigningSecret(account.instance_id))).toBe(rotated.signing_secret);
    expect(after.secret_rotated_at.getTime()).toBeGreaterThan(before.secret_rotated_at.getTime());
    expect(new Date(rotated.secret_rotated_at).getTime()).toBe(after.secret_rotated_at.getTime());

    const shown = await cli(LOOPBACK_ALLOWED, 'webhook', 'show', '--instance', account.instance_id, '--json');
    expect(shown.stdout).not.toContain('whsec_');
  });

  it('pause, resume and show; a disabled endpoint comes back with a fresh failure count', async () => {
    const account = await withWebhook();
    const id = account.instance_id;
    expect(await ok(LOOPBACK_ALLOWED, 'webhook', 'pause', '--instance', id)).toEqual({ instance_id: id, status: 'paused', previous_status: 'active' });
    const paused = await ok(LOOPBACK_ALLOWED, 'webhook', 'show', '--instance', id);
    expect(paused).toEqual({
      instance_id: id,
      destination_url: RECEIVER,
      events: resolveSubscription(['recommended']),
      status: 'paused',
      disabled_reason: null,
      disabled_at: null,
      failing_since: null,
      consecutive_failures: 0,
      last_success_at: null,
      secret_rotated_at: expect.any(String),
      deliveries: { pending: 0, in_flight: 0, delivered: 0, failed: 0 },
    });
    const human = await cli(LOOPBACK_ALLOWED, 'webhook', 'show', '--instance', id);
    expect(human.stdout).toMatch(/^status\s+paused$/m);
    expect(await ok(LOOPBACK_ALLOWED, 'webhook', 'resume', '--instance', id)).toEqual({ instance_id: id, status: 'active', previous_status: 'paused' });

    // The service disables an endpoint that answered 410 (simulated here).
    const disable = () =>
      suite.db.query(sql.typeAlias('void')`
        UPDATE webhook_endpoints SET status = 'disabled', disabled_reason = 'gone', disabled_at = now(),
               failing_since = now() - interval '1 hour', consecutive_failures = 7, last_success_at = now() - interval '2 hours'
         WHERE instance_id = ${id}`);
    await disable();
    await insertDelivery(account, { eventId: 'evt-show-1', state: 'failed', createdAt: new Date(), attempts: 8, lastStatus: 410 });
    await insertDelivery(account, { eventId: 'evt-show-2', state: 'delivered', createdAt: new Date(), attempts: 1, lastStatus: 200 });
    await insertDelivery(account, { eventId: 'evt-show-3', state: 'delivered', createdAt: new Date(), attempts: 1, lastStatus: 200 });
    const disabled = await ok(LOOPBACK_ALLOWED, 'webhook', 'show', '--instance', id);
    expect(disabled).toMatchObject({
      status: 'disabled',
      disabled_reason: 'gone',
      disabled_at: expect.any(String),
      failing_since: expect.any(String),
      consecutive_failures: 7,
      last_success_at: expect.any(String),
      deliveries: { pending: 0, in_flight: 0, delivered: 2, failed: 1 },
    });
    expect(await refused(LOOPBACK_ALLOWED, 'webhook', 'pause', '--instance', id)).toContain('is disabled (gone)');

    const fresh = { status: 'active', disabled_reason: null, disabled_at: null, failing_since: null, consecutive_failures: 0 };
    expect(await ok(LOOPBACK_ALLOWED, 'webhook', 'resume', '--instance', id)).toEqual({ instance_id: id, status: 'active', previous_status: 'disabled' });
    expect(await endpointRow(id)).toMatchObject(fresh);

    // set with the same URL leaves a disabled endpoint disabled; a new URL re-activates it afresh.
    await disable();
    expect((await ok(LOOPBACK_ALLOWED, 'webhook', 'set', '--instance', id, '--url', RECEIVER, '--events', 'recommended')).status).toBe('disabled');
    const moved = await ok(LOOPBACK_ALLOWED, 'webhook', 'set', '--instance', id, '--url', `${RECEIVER}/new`, '--events', 'recommended');
    expect(moved).toMatchObject({ status: 'active', destination_url: `${RECEIVER}/new` });
    expect(moved.signing_secret).toBeUndefined();
    expect(await endpointRow(id)).toMatchObject(fresh);
  });

  it('deliveries lists newest first with the attempts log, filtered by state and limited', async () => {
    const account = await withWebhook();
    const t = Date.now() - 60_000;
    const oldest = await insertDelivery(account, { eventId: 'evt-list-1', state: 'delivered', createdAt: new Date(t), attempts: 1, lastStatus: 200 });
    const middle = await insertDelivery(account, { eventId: 'evt-list-2', event: 'message.failed', state: 'failed', createdAt: new Date(t + 1000), attempts: 2, lastStatus: 500, lastError: 'http_500' });
    const newest = await insertDelivery(account, { eventId: 'evt-list-3', state: 'pending', createdAt: new Date(t + 2000) });
    const attempt = (n: number, at: number, status: number, outcome: string, next: Date | null, snippet: string) =>
      suite.db.query(sql.typeAlias('void')`
        INSERT INTO webhook_attempts (delivery_id, attempt, attempted_at, destination_url, status_code, latency_ms, response_snippet, error, outcome, next_attempt_at)
        VALUES (${middle}, ${n}, ${timestamptz(new Date(at))}, ${RECEIVER}, ${status}, ${40 + n}, ${snippet}, ${`http_${status}`}, ${outcome}, ${timestamptz(next)})`);
    // Inserted out of order: the log is still in attempt order.
    await attempt(2, t + 7000, 500, 'failed', null, 'still broken');
    await attempt(1, t + 1500, 503, 'retry', new Date(t + 6500), 'try later');

    const listed = await ok(LOOPBACK_ALLOWED, 'webhook', 'deliveries', '--instance', account.instance_id);
    expect(Array.isArray(listed)).toBe(true);
    expect(listed.map((d: { delivery_id: string }) => d.delivery_id)).toEqual([newest, middle, oldest]);
    expect(listed[1]).toEqual({
      delivery_id: middle,
      event: 'message.failed',
      state: 'failed',
      attempts: 2,
      next_attempt_at: new Date(t + 1000 + 3_600_000).toISOString(),
      last_status: 500,
      last_error: 'http_500',
      created_at: new Date(t + 1000).toISOString(),
      attempts_log: [
        { attempt: 1, attempted_at: new Date(t + 1500).toISOString(), status_code: 503, latency_ms: 41, error: 'http_503', outcome: 'retry', next_attempt_at: new Date(t + 6500).toISOString(), response_snippet: 'try later' },
        { attempt: 2, attempted_at: new Date(t + 7000).toISOString(), status_code: 500, latency_ms: 42, error: 'http_500', outcome: 'failed', next_attempt_at: null, response_snippet: 'still broken' },
      ],
    });
    expect(listed[0].attempts_log).toEqual([]);

    const failed = await ok(LOOPBACK_ALLOWED, 'webhook', 'deliveries', '--instance', account.instance_id, '--state', 'failed');
    expect(failed.map((d: { delivery_id: string }) => d.delivery_id)).toEqual([middle]);
    const limited = await ok(LOOPBACK_ALLOWED, 'webhook', 'deliveries', '--instance', account.instance_id, '--limit', '2');
    expect(limited.map((d: { delivery_id: string }) => d.delivery_id)).toEqual([newest, middle]);
    expect(await refused(LOOPBACK_ALLOWED, 'webhook', 'deliveries', '--instance', account.instance_id, '--state', 'lost')).toContain('Unknown delivery state lost');
    expect(await refused(LOOPBACK_ALLOWED, 'webhook', 'deliveries', '--instance', account.instance_id, '--limit', '0')).toContain('0 is not a whole number');

    const human = await cli(LOOPBACK_ALLOWED, 'webhook', 'deliveries', '--instance', account.instance_id);
    expect(human.code, human.stderr).toBe(0);
    expect(human.stdout).toMatch(new RegExp(`^delivery_id\\s+${middle}$`, 'm'));
  });

  it('resend puts a delivery back to pending, due now, in a new round; refuses in-flight and unknown ones', async () => {
    const account = await withWebhook();
    const delivered = await insertDelivery(account, { eventId: 'evt-resend-1', state: 'delivered', createdAt: new Date(Date.now() - 60_000), attempts: 3, lastStatus: 200 });
    const before = Date.now();
    const resent = await ok(LOOPBACK_ALLOWED, 'webhook', 'resend', delivered);
    expect(resent).toMatchObject({ delivery_id: delivered, instance_id: account.instance_id, state: 'pending', attempts: 3, endpoint_status: 'active' });
    const row = (await deliveryRow(delivered))!;
    expect(row).toMatchObject({ state: 'pending', round_attempts: 0, attempts: 3, lease_until: null });
    expect(Math.abs(row.next_attempt_at.getTime() - before)).toBeLessThan(30_000);
    expect(row.next_attempt_at.getTime()).toBeLessThanOrEqual(Date.now());

    const inFlight = await insertDelivery(account, { eventId: 'evt-resend-2', state: 'in_flight', createdAt: new Date(), attempts: 1, leaseUntil: new Date(Date.now() + 120_000) });
    expect(await refused(LOOPBACK_ALLOWED, 'webhook', 'resend', inFlight)).toContain('is being delivered right now');
    expect((await deliveryRow(inFlight))!.state).toBe('in_flight');
    expect(await refused(LOOPBACK_ALLOWED, 'webhook', 'resend', 'whd_00000000000000000000000000000000')).toBe('No webhook delivery whd_00000000000000000000000000000000.');
  });

  it('recover re-queues what this endpoint missed since a time, from the gateway-events topic, once', async () => {
    const a = await withWebhook('message.received,instance.connected');
    const b = await withWebhook('message.received');
    const config = loadConfig(suite.stack.env);
    const topics = new Topics(config.topicPrefix, config.topicPartitions);
    const codec = new EventCodec(config.schemaRegistryUrl, topics);
    await codec.init(['GatewayEventEmitted']);
    const kafka = new KafkaClient({ brokers: config.kafkaBrokers, clientId: 'webhook-cli-test', logger: createLogger('webhook-cli-test', 'error') });
    await kafka.ensureTopics(topics.specs());

    const since = new Date(Date.now() - 10 * 60_000);
    const at = (offsetMs: number) => since.getTime() + offsetMs;
    const emitted = (account: DemoAccount, eventId: string, event: string, occurredAt: number): GatewayEventEmitted => ({
      event_id: eventId,
      correlation_id: `src-${eventId}`,
      occurred_at: occurredAt,
      customer_id: account.customer_id,
      instance_id: account.instance_id,
      event,
      // Deliberately not canonical JSON (spacing, key order): the body must be copied byte for byte.
      payload: `{"event": "${event}", "instance_id": "${account.instance_id}", "instance_name": "${account.instance_name}", "timestamp": "${new Date(occurredAt).toISOString()}", "from": "+14155550100"}`,
    });
    const before = emitted(a, 'evt-rec-before', 'message.received', at(-60_000));
    const missed = emitted(a, 'evt-rec-missed', 'message.received', at(1000));
    const failedOnce = emitted(a, 'evt-rec-failed', 'instance.connected', at(2000));
    const notSubscribed = emitted(a, 'evt-rec-sent', 'message.sent', at(3000));
    const otherInstance = emitted(b, 'evt-rec-other', 'message.received', at(4000));
    const deliveredOnce = emitted(a, 'evt-rec-delivered', 'message.received', at(5000));
    // First, an event appended long before --since (its Kafka timestamp too): recover starts reading after it.
    await appendBackdated(config.kafkaBrokers, await codec.encode('GatewayEventEmitted', emitted(a, 'evt-rec-ancient', 'message.received', at(-3_600_000))), at(-3_600_000));
    const events = [before, missed, failedOnce, notSubscribed, otherInstance, deliveredOnce, missed /* a replayed copy */];
    await kafka.send(await Promise.all(events.map((e) => codec.encode('GatewayEventEmitted', e))));
    await kafka.close();

    const failedId = await insertDelivery(a, { eventId: failedOnce.event_id, event: failedOnce.event, state: 'failed', createdAt: new Date(at(2000)), attempts: 8, lastStatus: 500 });
    const deliveredId = await insertDelivery(a, { eventId: deliveredOnce.event_id, state: 'delivered', createdAt: new Date(at(5000)), attempts: 1, lastStatus: 200 });

    const first = await ok(LOOPBACK_ALLOWED, 'webhook', 'recover', '--instance', a.instance_id, '--since', since.toISOString());
    expect(first).toEqual({ instance_id: a.instance_id, since: since.toISOString(), records_read: events.length, scanned: 3, queued: 1, requeued: 1, skipped: 1 });

    const queued = (await deliveryRow(deliveryIdFor(missed.event_id, a.instance_id)))!;
    expect(queued).toMatchObject({ event_id: missed.event_id, instance_id: a.instance_id, customer_id: a.customer_id, event: 'message.received', body: missed.payload, state: 'pending', attempts: 0, round_attempts: 0 });
    expect(queued.occurred_at.getTime()).toBe(missed.occurred_at);
    expect(queued.next_attempt_at.getTime()).toBeLessThanOrEqual(Date.now());
    expect(await deliveryRow(failedId)).toMatchObject({ state: 'pending', round_attempts: 0, attempts: 8, lease_until: null });
    expect((await deliveryRow(deliveredId))!.state).toBe('delivered');
    const ids = await suite.db.anyFirst(sql.type(z.object({ event_id: z.string() }))`SELECT event_id FROM webhook_deliveries WHERE instance_id = ANY(${sql.array([a.instance_id, b.instance_id], 'text')}) ORDER BY event_id`);
    expect(ids).toEqual([deliveredOnce.event_id, failedOnce.event_id, missed.event_id].sort());

    const second = await ok(LOOPBACK_ALLOWED, 'webhook', 'recover', '--instance', a.instance_id, '--since', since.toISOString());
    expect(second).toMatchObject({ scanned: 3, queued: 0, requeued: 0, skipped: 3 });

    expect(await refused(LOOPBACK_ALLOWED, 'webhook', 'recover', '--instance', a.instance_id, '--since', 'yesterday')).toContain('is not an ISO 8601 time');
    await suite.db.query(sql.typeAlias('void')`UPDATE webhook_endpoints SET status = 'disabled', disabled_reason = 'failing_too_long', disabled_at = now() WHERE instance_id = ${b.instance_id}`);
    expect(await refused(LOOPBACK_ALLOWED, 'webhook', 'recover', '--instance', b.instance_id, '--since', since.toISOString())).toContain(
      `resume it first: gatewayctl webhook resume --instance ${b.instance_id}`,
    );
    // A disabled endpoint gets no deliveries, resent ones included.
    const bDelivery = await insertDelivery(b, { eventId: otherInstance.event_id, state: 'failed', createdAt: new Date(), attempts: 8 });
    expect(await refused(LOOPBACK_ALLOWED, 'webhook', 'resend', bDelivery)).toContain('resume it first');
  });

  it('demo --webhook-url configures the demo instance and prints webhook_signing_secret', async () => {
    const demo = await ok(LOOPBACK_ALLOWED, 'demo', '--webhook-url', RECEIVER);
    expect(demo.webhook_signing_secret).toMatch(SECRET_FORMAT);
    const stored = (await endpointRow(demo.instance_id))!;
    expect(stored).toMatchObject({ customer_id: demo.customer_id, destination_url: RECEIVER, events: resolveSubscription(['recommended']), status: 'active' });
    expect(box().open(stored.signing_secret_enc, SEAL_USES.webhookSigningSecret(demo.instance_id))).toBe(demo.webhook_signing_secret);

    const chosen = await ok(LOOPBACK_ALLOWED, 'demo', '--webhook-url', RECEIVER, '--webhook-events', 'all');
    expect((await endpointRow(chosen.instance_id))!.events).toEqual(resolveSubscription(['all']));

    // A refused URL is refused before any account is made.
    const customers = () => suite.db.oneFirst(sql.type(z.object({ n: z.number() }))`SELECT count(*) AS n FROM customers`);
    const count = await customers();
    expect(await refused(PRODUCTION_RULES, 'demo', '--webhook-url', RECEIVER)).toContain(await guardMessage(RECEIVER));
    expect(await refused(LOOPBACK_ALLOWED, 'demo', '--webhook-url', RECEIVER, '--webhook-events', 'nope')).toContain('"nope"');
    expect(await customers()).toBe(count);
  });
});

/** Appends one record with an old Kafka timestamp (KafkaClient always stamps records now). */
async function appendBackdated(brokers: string[], record: OutgoingRecord, timestamp: number): Promise<void> {
  const producer = new Kafka({ clientId: 'webhook-cli-test-backdated', brokers, logLevel: logLevel.NOTHING }).producer({ allowAutoTopicCreation: false });
  await producer.connect();
  try {
    await producer.send({ topic: record.topic, acks: -1, messages: [{ key: record.key, value: record.value, headers: record.headers, timestamp: String(timestamp) }] });
  } finally {
    await producer.disconnect();
  }
}
