// One process of the send path's floor (see bench/lib/floor.ts): the hops a send makes between
// the API, policy and delivery processes, with none of the work. Records are small JSON, there is
// no Postgres, no schema registry, no authentication and no rule. Role from FLOOR_ROLE:
//   api       POST /send appends to `requests` and answers when `outcomes` (or a rejection on
//             `decisions`) carries its id back; POST /hook appends the instance's webhook to
//             `instance-events` and answers once it is acknowledged.
//   policy    requests -> decisions, one record each, as a consume-transform-produce stage.
//   delivery  decisions -> POST {FLOOR_INSTANCE_URL}/message/sendText -> outcomes.
// Prints one JSON line {"ready":true,"port":N} on stdout once it can take work.
import { randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import Fastify from 'fastify';
import pino from 'pino';
import { Agent, request } from 'undici';
import { KafkaClient, type ConsumedRecord, type OutgoingRecord } from '@gw/kafka';
import { onShutdown } from '@gw/runtime';
import { floorTopics, FLOOR_ID_HEADER } from './topics.ts';

const role = process.env.FLOOR_ROLE;
const prefix = process.env.FLOOR_PREFIX ?? '';
const brokers = (process.env.KAFKA_BROKERS ?? '127.0.0.1:19092').split(',');
const topics = floorTopics(prefix);
const logger = pino({ level: 'warn' });
const kafka = new KafkaClient({ brokers, clientId: `bench-floor-${role}`, logger, exactlyOnce: 'idempotent' });

// Stops on SIGTERM, or when the harness dies (STOP_WITH_PARENT_PID), as the services do.
const closers: Array<() => Promise<unknown>> = [() => kafka.close()];
onShutdown(logger, async () => {
  for (const close of closers.splice(0).reverse()) await close().catch(() => undefined);
});

const forward = (record: ConsumedRecord, topic: string, value: Buffer): OutgoingRecord => ({
  topic,
  key: record.key ?? '',
  value,
  headers: { [FLOOR_ID_HEADER]: record.headers[FLOOR_ID_HEADER] ?? '' },
});

async function api(): Promise<number> {
  const waiting = new Map<string, (status: number) => void>();
  const replies = await kafka.listen({
    groupId: `${prefix}floor-api-replies-${randomUUID()}`,
    topics: [topics.decisions, topics.outcomes],
    fromBeginning: false,
    onRecord: (record) => {
      const id = record.headers[FLOOR_ID_HEADER];
      if (!id) return;
      // A decision wakes a request only when it refuses; an accepted one waits for its outcome.
      if (record.topic === topics.outcomes) waiting.get(id)?.(200);
      else if (record.value?.[0] === 0x72 /* 'r'ejected */) waiting.get(id)?.(403);
    },
  });
  await replies.ready;
  const app = Fastify({ logger: false, bodyLimit: 1 << 20 });
  closers.push(() => app.close());
  app.post('/send', async (req, reply) => {
    const body = req.body as { customer?: string };
    const id = randomUUID();
    let timer: NodeJS.Timeout | undefined;
    const answered = new Promise<number>((resolve) => {
      waiting.set(id, resolve);
      timer = setTimeout(() => resolve(504), 15_000);
    });
    try {
      await kafka.send([{ topic: topics.requests, key: body.customer ?? 'c', value: Buffer.from(JSON.stringify(req.body)), headers: { [FLOOR_ID_HEADER]: id } }]);
      const status = await answered;
      return reply.code(status).send({ success: status === 200, id });
    } finally {
      clearTimeout(timer);
      waiting.delete(id);
    }
  });
  app.post('/hook/:customer', async (req, reply) => {
    const customer = (req.params as { customer: string }).customer;
    await kafka.send([{ topic: topics.instanceEvents, key: customer, value: Buffer.from(JSON.stringify(req.body)), headers: { [FLOOR_ID_HEADER]: randomUUID() } }]);
    return reply.send({ ok: true });
  });
  await app.listen({ host: '127.0.0.1', port: 0 });
  return (app.server.address() as AddressInfo).port;
}

// The floor's stages do no work that could fail for a record: every failure is retried.
const retryEverything = { isTransient: () => true, maxTries: 1, deadLetter: async () => [] };

async function policy(): Promise<number> {
  const stage = await kafka.transform({
    groupId: `${prefix}floor-policy`,
    topics: [topics.requests],
    transactionalIdPrefix: `${prefix}floor-policy`,
    faults: retryEverything,
    transform: async (records) => records.map((record) => forward(record, topics.decisions, Buffer.from(`accepted ${record.offset}`))),
  });
  await stage.ready;
  return 0;
}

async function delivery(): Promise<number> {
  const instanceUrl = process.env.FLOOR_INSTANCE_URL;
  if (!instanceUrl) throw new Error('FLOOR_INSTANCE_URL is required for the delivery role');
  const agent = new Agent({ connections: 64 });
  closers.push(() => agent.close());
  const stage = await kafka.transform({
    groupId: `${prefix}floor-delivery`,
    topics: [topics.decisions],
    transactionalIdPrefix: `${prefix}floor-delivery`,
    faults: retryEverything,
    transform: async (records) =>
      Promise.all(
        records.map(async (record) => {
          const res = await request(`${instanceUrl}/message/sendText/${record.key ?? 'c'}`, {
            method: 'POST',
            dispatcher: agent,
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ number: '+14155550100', text: 'floor' }),
          });
          const sent = (await res.body.json()) as { key?: { id?: string } };
          return forward(record, topics.outcomes, Buffer.from(`dispatched ${sent.key?.id ?? ''}`));
        }),
      ),
  });
  await stage.ready;
  return 0;
}

const roles: Record<string, () => Promise<number>> = { api, policy, delivery };
const start = role ? roles[role] : undefined;
if (!start) {
  console.error(`FLOOR_ROLE must be one of ${Object.keys(roles).join(', ')}`);
  process.exit(2);
}
start()
  .then((port) => console.log(JSON.stringify({ ready: true, port })))
  .catch((error: unknown) => {
    console.error(`floor ${role} failed to start: ${String(error)}`);
    process.exit(1);
  });
