import { connect } from 'node:net';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '@gw/config';
import { sql, z } from '@gw/db';
import { EventCodec, newEventId, Topics } from '@gw/events';
import { KafkaClient } from '@gw/kafka';
import { createLogger } from '@gw/observability';
import { demoAccount, type DemoAccount } from '../support/accounts.ts';
import { send } from '../support/http.ts';
import { until, useStack } from '../support/suite.ts';

// Every string that reaches Kafka from outside is checked at its boundary: no NUL, no unpaired
// surrogate, bounded; phone numbers in E.164 and manager JIDs well formed. A refused manager
// event is recorded with its reason and never mapped, wherever it is met.
const suite = useStack({ services: ['api', 'policy', 'delivery', 'instance-events'], env: { API_REQUEST_TIMEOUT_MS: '1000' } });

const managerWebhook = async (account: DemoAccount) => {
  const manager = await suite.db.oneFirst(sql.type(z.object({ manager_instance: z.string() }))`SELECT manager_instance FROM instances WHERE id = ${account.instance_id}`);
  const hook = await suite.stack.simulator.call('GET', `/webhook/find/${manager}`);
  // The manager posts with the ingest token in its Authorization header (the URL carries none).
  const headers = { 'content-type': 'application/json', authorization: String(hook.body.headers?.Authorization) };
  return { url: hook.body.url as string, manager, headers };
};

const upsert = (instance: string, remoteJid: string, text: string) => ({
  event: 'messages.upsert',
  instance,
  data: { key: { remoteJid, fromMe: false, id: `ABC${Math.random().toString(16).slice(2, 10)}` }, message: { conversation: text }, messageType: 'conversation' },
});

describe('the boundaries', () => {
  it('the send endpoint refuses a NUL, an unpaired surrogate or an over-long field with 422 validation_error naming the field', async () => {
    const account = await demoAccount(suite.stack);
    const base = { instance_id: account.instance_id, phone: '+14155558801', message: 'Your code is 4411', message_purpose: 'authentication' };
    for (const [field, value] of [['message', 'code\u0000 4411'], ['message', 'code \ud800 4411'], ['instance_id', 'front\u0000'], ['phone', '+1415555\u00008801'], ['message', 'x'.repeat(4097)]] as const) {
      const answer = await send(suite.stack.apiUrl, account.api_key, JSON.stringify({ ...base, [field]: value }));
      expect(answer.status, `${field} ${JSON.stringify(value).slice(0, 40)}`).toBe(422);
      expect(answer.body).toMatchObject({ success: false, error: 'validation_error', details: { field } });
      expect(JSON.stringify(answer.body)).not.toContain('4411');
    }
    // A well-formed astral character (a pair) is text like any other.
    expect((await send(suite.stack.apiUrl, account.api_key, { ...base, message: 'Your code is 4411 🔑' })).body.status).toBe('sent');
  });

  it('the PBX webhook refuses a NUL in any field, its own or the contract\'s, with 400', async () => {
    const account = await demoAccount(suite.stack);
    const post = (body: unknown) =>
      fetch(`${suite.stack.apiUrl}/integrations/pbx/webhook/${account.pbx_integration_id}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-chat-gateway-pbx-secret': account.pbx_secret },
        body: JSON.stringify(body),
      });
    for (const body of [{ event_type: 'call_started', queue: 'sales\u0000' }, { event_type: 'call_started', crm_note: 'x\ud800' }]) {
      const answer = await post(body);
      expect(answer.status).toBe(400);
      expect(await answer.json()).toMatchObject({ success: false, error: 'validation_error' });
    }
  });

  it('the ingest refuses a manager event whose sender is not a JID, records it with its reason, and maps nothing', async () => {
    const account = await demoAccount(suite.stack);
    const { url, manager, headers } = await managerWebhook(account);
    const bad = await fetch(url, { method: 'POST', headers, body: JSON.stringify(upsert(manager, '\u0000', 'STOP')) });
    expect(bad.status).toBe(400);
    expect(await bad.json()).toMatchObject({ success: false, error: 'validation_error', details: { reason: expect.stringMatching(/remoteJid contains a NUL/) } });
    const rejected = await suite.db.any(sql.type(z.object({ event: z.string(), reason: z.string(), stage: z.string() }))`SELECT event, reason, stage FROM instance_event_rejections WHERE instance_id = ${account.instance_id}`);
    expect(rejected).toEqual([{ event: 'messages.upsert', reason: 'data.key.remoteJid contains a NUL character', stage: 'ingest' }]);
    for (const jid of ['STOP', '+14155558802', '14155558802@example.com', '12@s.whatsapp.net']) {
      expect((await fetch(url, { method: 'POST', headers, body: JSON.stringify(upsert(manager, jid, 'STOP')) })).status).toBe(400);
    }
    // The instance's good events still go through: an opt-out from a real number.
    expect((await fetch(url, { method: 'POST', headers, body: JSON.stringify(upsert(manager, '14155558803@s.whatsapp.net', 'STOP')) })).status).toBe(200);
    await until(async () => (await suite.db.query(sql.unsafe`SELECT 1 FROM suppressions WHERE customer_id = ${account.customer_id}`)).rowCount === 1, 20_000, 'the good opt-out');
    const suppressed = await suite.db.any(sql.type(z.object({ recipient: z.string() }))`SELECT recipient FROM suppressions WHERE customer_id = ${account.customer_id}`);
    expect(suppressed).toEqual([{ recipient: '+14155558803' }]);
  });

  it('the stage refuses the same way a bad envelope appended before the ingest checked it, and goes on', async () => {
    const account = await demoAccount(suite.stack);
    const config = loadConfig(suite.stack.env);
    const topics = new Topics(config.topicPrefix, config.topicPartitions);
    const codec = new EventCodec(config.schemaRegistryUrl, topics);
    await codec.init(['InstanceEventReceived']);
    const kafka = new KafkaClient({ brokers: config.kafkaBrokers, clientId: 'old-ingest', logger: createLogger('old-ingest', 'error') });
    try {
      const event = (remoteJid: string, digest: string) => {
        const id = newEventId();
        return codec.encode('InstanceEventReceived', {
          event_id: id, correlation_id: id, occurred_at: Date.now(), customer_id: account.customer_id, instance_id: account.instance_id,
          instance_name: account.instance_name, manager_instance: 'm', event: 'messages.upsert', digest, payload: JSON.stringify(upsert('m', remoteJid, 'STOP')),
        });
      };
      await kafka.send([await event('\u0000', 'old-bad'), await event('14155558804@s.whatsapp.net', 'old-good')]);
      await until(async () => (await suite.db.query(sql.unsafe`SELECT 1 FROM suppressions WHERE customer_id = ${account.customer_id}`)).rowCount === 1, 20_000, 'the good opt-out after the bad one');
      const rejected = await suite.db.any(sql.type(z.object({ digest: z.string(), reason: z.string(), stage: z.string() }))`SELECT digest, reason, stage FROM instance_event_rejections WHERE instance_id = ${account.instance_id}`);
      expect(rejected).toEqual([{ digest: 'old-bad', reason: 'data.key.remoteJid contains a NUL character', stage: 'instance-events' }]);
    } finally {
      await kafka.close();
    }
  });

  it('a client that trickles its request is answered 408 and cut off (API_REQUEST_TIMEOUT_MS)', async () => {
    const { port } = new URL(suite.stack.apiUrl);
    const started = Date.now();
    const answer = await new Promise<string>((resolve, reject) => {
      const socket = connect(Number(port), '127.0.0.1', () => {
        // Headers promise a body that never comes (the PBX route reads the whole body before anything else).
        socket.write('POST /integrations/pbx/webhook/1 HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"eve');
      });
      let received = '';
      socket.on('data', (chunk) => (received += chunk.toString()));
      socket.on('close', () => resolve(received));
      socket.on('error', reject);
      socket.setTimeout(20_000, () => reject(new Error('the server kept the connection open')));
    });
    expect(answer).toMatch(/^HTTP\/1\.1 408/);
    expect(Date.now() - started).toBeLessThan(15_000);
  });
});
