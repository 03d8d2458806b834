// The customer-webhook benchmark: signed deliveries per second from the webhooks service to a
// local receiver, beside a bare HTTP client loop posting the same bodies to the same receiver in
// the same run; then the same load again with one dead endpoint (it never answers) beside the
// healthy ones, to show the healthy endpoints' throughput holds. Reports only.
import { createHmac } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Agent, request } from 'undici';
import { createPool, sql, z } from '@gw/db';
import type { WebhookEventName } from '@gw/webhooks';
import { demoAccount, type DemoAccount } from '../test/support/accounts.ts';
import { gatewayctl } from '../test/support/cli.ts';
import { startStack, type Stack } from '../test/support/stack.ts';
import { baseConfig } from '../test/support/infra.ts';
import { gatewayEventWriter } from '../test/support/webhook-events.ts';
import { defer, deleteKafkaState, deleteSubjects } from './lib/teardown.ts';

export interface WebhookBenchOptions {
  /** Events per healthy endpoint in each measured run. */
  eventsPerEndpoint: number;
  endpoints: number;
  /** Requests in flight in the bare loop: the service's per-endpoint concurrency × endpoints. */
  connections: number;
  /** Alternating rounds of (alone, beside the dead endpoint); the best of each kept. */
  rounds: number;
  /** A first run as large as a measured one (connections, JIT, registry lookups, Postgres caches). */
  warmUp: boolean;
  /** The service's attempt timeout (WEBHOOK_TIMEOUT_MS): how long a dead endpoint's attempt hangs. */
  attemptTimeoutMs: number;
}

const KINDS: WebhookEventName[] = ['message.received', 'message.sent', 'message.failed', 'recipient.opted_out'];

/** One loopback receiver for every endpoint: answers 200 at once, counts by path, hangs on /dead. */
async function startCountingReceiver() {
  const counts = new Map<string, number>();
  const signed = { checked: 0, valid: 0 };
  const secrets = new Map<string, string>();
  const waiters: Array<() => void> = [];
  const server: Server = createServer((req, res) => {
    if (req.url === '/dead') {
      counts.set('/dead', (counts.get('/dead') ?? 0) + 1);
      return; // never answers: the sender's timeout ends it
    }
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const path = req.url ?? '';
      const n = (counts.get(path) ?? 0) + 1;
      counts.set(path, n);
      const secret = secrets.get(path);
      // One request in a hundred is checked against an independent HMAC: the deliveries are signed.
      if (secret && n % 100 === 1) {
        signed.checked++;
        const expected = `sha256=${createHmac('sha256', secret).update(`${String(req.headers['x-chat-gateway-timestamp'])}.`).update(Buffer.concat(chunks)).digest('hex')}`;
        if (req.headers['x-chat-gateway-signature'] === expected) signed.valid++;
      }
      res.writeHead(200).end();
      for (const w of waiters.splice(0)) w();
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    base,
    counts,
    signed,
    secrets,
    /** Resolves when the paths' counts reach `n` each, or rejects after `timeoutMs`. */
    async waitFor(paths: string[], n: number, timeoutMs: number): Promise<void> {
      const deadline = Date.now() + timeoutMs;
      while (!paths.every((p) => (counts.get(p) ?? 0) >= n)) {
        if (Date.now() > deadline) throw new Error(`receiver: ${paths.map((p) => `${p}=${counts.get(p) ?? 0}`).join(' ')} of ${n} after ${timeoutMs} ms`);
        await new Promise<void>((resolve) => {
          waiters.push(resolve);
          setTimeout(resolve, 200);
        });
      }
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

type Receiver = Awaited<ReturnType<typeof startCountingReceiver>>;

/** The bare loop: `connections` workers posting the same kind of body, no signing, no store. */
async function bareLoop(url: string, total: number, connections: number, body: string): Promise<number> {
  const agent = new Agent({ connections, pipelining: 1, keepAliveTimeout: 60_000 });
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: connections }, async () => {
      while (next < total) {
        next++;
        const res = await request(url, { method: 'POST', dispatcher: agent, headers: { 'content-type': 'application/json' }, body });
        await res.body.dump();
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  await agent.close();
  return total / seconds;
}

async function configure(stack: Stack, receiver: Receiver, path: string): Promise<DemoAccount> {
  const account = await demoAccount(stack);
  const out = await gatewayctl({ ...stack.env, WEBHOOK_ALLOW_CIDRS: '127.0.0.0/8' }, '--json', 'webhook', 'set', '--instance', account.instance_id, '--url', `${receiver.base}${path}`, '--events', 'recommended');
  if (out.code !== 0) throw new Error(`webhook set failed: ${out.stdout}${out.stderr}`);
  receiver.secrets.set(path, (JSON.parse(out.stdout) as { signing_secret: string }).signing_secret);
  return account;
}

type Writer = Awaited<ReturnType<typeof gatewayEventWriter>>;

/** The encoded records of `perEndpoint` events for each account (encoding is the producer's cost, not measured). */
async function eventsFor(writer: Writer, accounts: DemoAccount[], perEndpoint: number) {
  const items = accounts.flatMap((account) =>
    Array.from({ length: perEndpoint }, (_, i) => ({ customerId: account.customer_id, instanceId: account.instance_id, instanceName: account.instance_name, event: KINDS[i % KINDS.length]! })),
  );
  return (await writer.prepare(items)).records;
}

/**
 * Records the append queue takes at a time. The client's queue is bounded (QueueFull past 10,000
 * waiting records): a producer awaits each bounded chunk, as a stage awaits its batch, instead of
 * handing the queue more than it holds.
 */
const APPEND_CHUNK = 1_000;

async function append(writer: Writer, records: Awaited<ReturnType<typeof eventsFor>>): Promise<void> {
  for (let from = 0; from < records.length; from += APPEND_CHUNK) await writer.append(records.slice(from, from + APPEND_CHUNK));
}

async function emitFor(writer: Writer, accounts: DemoAccount[], perEndpoint: number): Promise<void> {
  await append(writer, await eventsFor(writer, accounts, perEndpoint));
}

/** Appends `perEndpoint` events for each healthy account; returns deliveries/s once the receiver has them all. */
async function measure(writer: Writer, receiver: Receiver, healthy: Array<{ account: DemoAccount; path: string }>, perEndpoint: number): Promise<number> {
  const records = await eventsFor(writer, healthy.map((h) => h.account), perEndpoint);
  const started = performance.now();
  await append(writer, records);
  await receiver.waitFor(healthy.map((h) => h.path), perEndpoint, 300_000);
  return (healthy.length * perEndpoint) / ((performance.now() - started) / 1000);
}

/** Waits until the service has queued `n` deliveries for the instance (its backlog is in place). */
async function queued(databaseUrl: string, instanceId: string, n: number): Promise<void> {
  const db = await createPool(databaseUrl, { maxConnections: 1 });
  try {
    const deadline = Date.now() + 120_000;
    for (;;) {
      const count = await db.oneFirst(sql.type(z.object({ n: z.number() }))`SELECT count(*)::int AS n FROM webhook_deliveries WHERE instance_id = ${instanceId}`);
      if (count >= n) return;
      if (Date.now() > deadline) throw new Error(`only ${count} of ${n} deliveries queued for the dead endpoint`);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  } finally {
    await db.end();
  }
}

export async function webhooksBench(options: WebhookBenchOptions): Promise<void> {
  console.log('\n== customer webhook benchmark');
  const receiver = await startCountingReceiver();
  defer('webhook bench receiver', receiver.close);
  const total = options.endpoints * options.eventsPerEndpoint;
  const sampleBody = JSON.stringify({ event: 'message.sent', instance_id: 'ins_0123456789abcdef01234567', instance_name: 'demo-bench', timestamp: new Date().toISOString(), to: '+14155550102', message_purpose: 'transactional', message_id: 'msg_1' });
  await bareLoop(`${receiver.base}/warmup`, 2000, options.connections, sampleBody);
  const bare = Math.max(
    await bareLoop(`${receiver.base}/bare`, total, options.connections, sampleBody),
    await bareLoop(`${receiver.base}/bare`, total, options.connections, sampleBody),
  );

  const stack = await startStack(['webhooks'], { WEBHOOK_ALLOW_CIDRS: '127.0.0.0/8', WEBHOOK_TIMEOUT_MS: String(options.attemptTimeoutMs) });
  defer('webhook bench stack', async () => {
    await stack.stop();
    await deleteKafkaState(baseConfig.kafkaBrokers, [stack.isolation.topicPrefix]);
    await deleteSubjects(baseConfig.schemaRegistryUrl, stack.isolation.topicPrefix);
  });
  const writer = await gatewayEventWriter(stack.env);
  defer('webhook bench writer', writer.close);
  const endpoints = async (run: string) =>
    Promise.all(Array.from({ length: options.endpoints }, async (_, i) => ({ path: `/${run}-${i}`, account: await configure(stack, receiver, `/${run}-${i}`) })));

  // Warm-up, as large as a measured run: connections, JIT, the registry lookups, Postgres caches.
  if (options.warmUp) await measure(writer, receiver, await endpoints('warm'), options.eventsPerEndpoint);
  // The two conditions alternate (twice, best of two each, but in the smoke): the machine is shared, and a
  // neighbour's burst should not decide the figure. The dead endpoint has a backlog as large as a
  // healthy one's; between runs it is paused and its hanging attempts are left to time out.
  const deadAccount = await configure(stack, receiver, '/dead');
  await emitFor(writer, [deadAccount], options.eventsPerEndpoint);
  await queued(stack.isolation.databaseUrl, deadAccount.instance_id, options.eventsPerEndpoint);
  const deadEndpoint = (verb: 'pause' | 'resume') => gatewayctl(stack.env, '--json', 'webhook', verb, '--instance', deadAccount.instance_id);
  const runs: Record<'alone' | 'beside', number[]> = { alone: [], beside: [] };
  for (let round = 1; round <= options.rounds; round++) {
    await deadEndpoint('pause');
    await new Promise((resolve) => setTimeout(resolve, options.attemptTimeoutMs + 1_000)); // the attempt timeout, and a second
    runs.alone.push(await measure(writer, receiver, await endpoints(`alone-${round}`), options.eventsPerEndpoint));
    const hanging = receiver.counts.get('/dead') ?? 0;
    await deadEndpoint('resume');
    await receiver.waitFor(['/dead'], hanging + 1, 30_000); // its attempts hang again
    runs.beside.push(await measure(writer, receiver, await endpoints(`beside-dead-${round}`), options.eventsPerEndpoint));
  }
  const alone = Math.max(...runs.alone);
  const besideDead = Math.max(...runs.beside);

  const r = Math.round;
  console.log(
    `webhooks: ${r(alone)} signed deliveries/s to ${options.endpoints} endpoints (${total} events, Kafka to receiver, best of ${options.rounds}); bare HTTP loop: ${r(bare)} req/s ` +
      `(${options.connections} in flight); ratio (webhooks/bare): ${(alone / Math.max(1, bare)).toFixed(2)}; target >= 2000/s and ratio >= 0.3`,
  );
  console.log(
    `webhooks: with one dead endpoint (never answers) beside them: ${r(besideDead)} deliveries/s to the healthy endpoints, ` +
      `${((besideDead / alone - 1) * 100).toFixed(1)}% vs without (target: within 10%; runs alone ${runs.alone.map(r).join(', ')}, beside ${runs.beside.map(r).join(', ')}); ` +
      `signatures checked ${receiver.signed.valid}/${receiver.signed.checked} valid`,
  );
}
