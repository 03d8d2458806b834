import { describe, expect, it } from 'vitest';
import { loadConfig } from '@gw/config';
import { EventCodec, EVENT_TYPE_HEADER, Topics, type EventType, type TopicName } from '@gw/events';
import { KafkaClient } from '@gw/kafka';
import { createLogger } from '@gw/observability';
import { toFactRecord } from '@gw/policy-log';
import { demoAccount, type DemoAccount } from '../support/accounts.ts';
import { gatewayctl } from '../support/cli.ts';
import { send } from '../support/http.ts';
import { until, useStack } from '../support/suite.ts';
import { startWebhookReceiver } from '../../services/instance-simulator/src/testing/webhook-receiver.ts';

// One poison record on each stage's input. Each stage must dead-letter it after its tries and go
// on: for other customers, and for the poisoned customer's later records. Before, one such
// record (a suppression of the recipient "\u0000") crash-looped the policy consumer and every
// send of every customer answered 500 pending_decision.
const ENV = { WEBHOOK_ALLOW_CIDRS: '127.0.0.0/8', WEBHOOK_POLL_MS: '100', STAGE_RECORD_TRIES: '2' };
const suite = useStack({ services: ['api', 'policy', 'delivery', 'instance-events', 'webhooks'], env: ENV });

async function cli(...args: string[]) {
  const out = await gatewayctl({ ...suite.stack.env, ...ENV }, '--json', ...args);
  return { ...out, json: JSON.parse(out.stdout.trim().split('\n').pop() || 'null') };
}

/** Appends records to the stack's topics directly, as a buggy or older producer would have. */
async function rawWriter() {
  const config = loadConfig(suite.stack.env);
  const topics = new Topics(config.topicPrefix, config.topicPartitions);
  const kafka = new KafkaClient({ brokers: config.kafkaBrokers, clientId: 'poison-writer', logger: createLogger('poison-writer', 'error') });
  const codec = new EventCodec(config.schemaRegistryUrl, topics);
  await codec.init(['PolicyInputRecorded', 'SendDecided']);
  return {
    codec,
    topics,
    /** A record whose header names an event type and whose Avro body is cut short: no stage can decode it. */
    undecodable: (topic: TopicName, type: EventType, key: string) => ({
      topic: topics.name(topic),
      key,
      value: Buffer.concat([Buffer.from([0]), Buffer.from([0, 0, 0, codec.schemaId('SendDecided')]), Buffer.from([0x99])]),
      headers: { [EVENT_TYPE_HEADER]: type, 'correlation-id': `poison-${topic}` },
    }),
    send: (records: Parameters<KafkaClient['send']>[0]) => kafka.send(records),
    close: () => kafka.close(),
  };
}

const sendOne = (account: DemoAccount, n: number, label: string) =>
  send(suite.stack.apiUrl, account.api_key, { instance_id: account.instance_id, phone: `+1415555${String(2000 + n).padStart(4, '0')}`, message: `${label} ${n}`, message_purpose: 'support' });

describe('a poison record on each stage', () => {
  it('is dead-lettered with its stage, error and position, and every stage goes on for every customer', async () => {
    const receiver = await startWebhookReceiver();
    const writer = await rawWriter();
    try {
      const poisoned = await demoAccount(suite.stack);
      const other = await demoAccount(suite.stack);
      for (const account of [poisoned, other]) {
        const set = await cli('webhook', 'set', '--instance', account.instance_id, '--url', `${receiver.url}/hooks`, '--events', 'message.sent');
        expect(set.code, set.stderr).toBe(0);
      }
      expect((await sendOne(poisoned, 0, 'before')).body.status).toBe('sent');

      // As in the incident, a NUL in an opt-out fact: valid Avro, so the engine folds it, and
      // Postgres refuses it (22P05) on every try. Here it suppresses a recipient the customer
      // sends to afterwards: the consumer moved past it, so those sends are accepted, and the
      // compliance replay must skip it too or it would decide them differently.
      const nul = toFactRecord({ type: 'RecipientSuppressed', customerId: poisoned.customer_id, at: Date.now(), recipient: '+14155552001', source: 'opt_out', reason: 'keyword:STOP\u0000', by: 'recipient' }, 'poison-policy');
      await writer.send([
        await writer.codec.encode('PolicyInputRecorded', nul),
        writer.undecodable('policyDecisions', 'SendDecided', poisoned.customer_id),
        writer.undecodable('deliveryEvents', 'MessageDispatched', poisoned.customer_id),
        writer.undecodable('instanceEvents', 'InstanceEventReceived', poisoned.customer_id),
        writer.undecodable('gatewayEvents', 'GatewayEventEmitted', poisoned.customer_id),
      ]);

      // Later records of the poisoned customer, and another customer's, go through every stage.
      for (let n = 1; n <= 3; n++) {
        for (const account of [poisoned, other]) {
          const answer = await sendOne(account, n, 'after');
          expect(answer.status, JSON.stringify(answer.body)).toBe(200);
          expect(answer.body.status).toBe('sent');
        }
      }
      // message.sent of each later send reached the webhook receiver (delivery-outcome-events and webhook-enqueue went on).
      await until(async () => receiver.received.filter((r) => String(r.body.to ?? '').startsWith('+14155552')).length >= 7, 30_000, 'message.sent webhooks after the poison');

      const letters = await cli('dlq', 'list');
      expect(letters.code, letters.stderr).toBe(0);
      const byStage = new Map<string, { id: string; source: { topic: string; partition: number; offset: string }; error: string; tries: number; customer_id: string }>(
        letters.json.map((l: { stage: string }) => [l.stage, l]),
      );
      expect([...byStage.keys()].sort()).toEqual(['delivery', 'delivery-outcome-events', 'instance-events', 'policy', 'webhook-enqueue']);
      const policyLetter = byStage.get('policy')!;
      expect(policyLetter).toMatchObject({ customer_id: poisoned.customer_id, tries: 2, source: { topic: writer.topics.name('customerEvents') } });
      expect(policyLetter.error).toMatch(/22P05/);
      expect(JSON.stringify(letters.json)).not.toContain('\\u0000');

      // What an SRE watches: the counter of each stage's service.
      const metrics = await (await fetch(suite.stack.readyUrl('policy').replace('/readyz', '/metrics'))).text();
      expect(metrics).toMatch(/gateway_dead_letters_total\{[^}]*group="[^"]*policy"[^}]*\} 1/);

      // The compliance replay skips what the consumer skipped: every decision replays the same.
      // (The one divergence is the garbage record this test put on the decisions topic, which
      // verify rightly reports: nothing but the policy consumer may write there.)
      const verify = await cli('policy-log', 'verify');
      expect(verify.json.divergences.map((d: { check: string }) => d.check), verify.stdout).toEqual(['undecodable']);
      expect(verify.json.counts).toMatchObject({ dead_lettered_customer_events: 1, decisions_replayed: 7 });

      // An operator discards one and retries another; a resolved letter is not resolved twice.
      const discarded = await cli('dlq', 'discard', policyLetter.id, '--reason', 'sender id was not a phone number', '--by', 'ops');
      expect(discarded.json).toMatchObject({ id: policyLetter.id, status: 'discarded', resolution: { resolution: 'discarded', by: 'ops' } });
      expect((await cli('dlq', 'discard', policyLetter.id, '--reason', 'again')).code).toBe(1);
      const retried = await cli('dlq', 'retry', byStage.get('webhook-enqueue')!.id);
      expect(retried.json).toMatchObject({ status: 'retried' });
      // The retried record fails again and becomes a new letter; the open list holds it and the other three.
      await until(async () => (await cli('dlq', 'list', '--stage', 'webhook-enqueue')).json.length === 1, 30_000, 'the retried record dead-lettered anew');
      const open = (await cli('dlq', 'list')).json as Array<{ id: string; stage: string }>;
      expect(open.map((l) => l.stage).sort()).toEqual(['delivery', 'delivery-outcome-events', 'instance-events', 'webhook-enqueue']);
      expect(open.find((l) => l.stage === 'webhook-enqueue')!.id).not.toBe(byStage.get('webhook-enqueue')!.id);
      const shown = await cli('dlq', 'show', byStage.get('delivery')!.id);
      expect(shown.json).toMatchObject({ headers: { 'event-type': 'SendDecided' }, value_bytes: 6 });
      expect(shown.json.value_base64).toBeUndefined();
    } finally {
      await writer.close();
      await receiver.close();
    }
  });
});
