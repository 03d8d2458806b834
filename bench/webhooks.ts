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
import { cpuSnapshot, cpuUsage, type CpuUsage } from './lib/cpu.ts';
import { formatProfiles, PROFILING, profileWindow } from './lib/profile.ts';
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

/**
 * One loopback receiver for every endpoint: answers 200 at once, counts by path, hangs on /dead
 * while `dead.hangs` (else refuses it at once: between runs the paused dead endpoint's lane empties
 * in moments instead of one attempt timeout per claim it still holds).
 */
async function startCountingReceiver() {
  const counts = new Map<string, number>();
  const hanging = new Set<import('node:net').Socket>();
  const dead = {
    hangs: true,
    /** Ends every hanging /dead request and refuses the next ones, until hangs is set again. */
    release() {
      dead.hangs = false;
      for (const socket of hanging) socket.destroy();
      hanging.clear();
    },
  };
  const signed = { checked: 0, valid: 0 };
  const secrets = new Map<string, string>();
  const waiters: Array<() => void> = [];
  const server: Server = createServer((req, res) => {
    if (req.url === '/dead') {
      counts.set('/dead', (counts.get('/dead') ?? 0) + 1);
      if (!dead.hangs) return void res.writeHead(503).end();
      hanging.add(req.socket);
      req.socket.once('close', () => hanging.delete(req.socket));
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
    dead,
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

/** Appends `perEndpoint` events for each healthy account; deliveries/s once the receiver has them all, and the CPU spent meanwhile. */
async function measure(writer: Writer, receiver: Receiver, healthy: Array<{ account: DemoAccount; path: string }>, perEndpoint: number): Promise<{ rate: number; cpu: CpuUsage }> {
  const records = await eventsFor(writer, healthy.map((h) => h.account), perEndpoint);
  const before = cpuSnapshot();
  const started = performance.now();
  await append(writer, records);
  await receiver.waitFor(healthy.map((h) => h.path), perEndpoint, 300_000);
  const rate = (healthy.length * perEndpoint) / ((performance.now() - started) / 1000);
  return { rate, cpu: cpuUsage(before, cpuSnapshot()) };
}

/** CPU ms per delivery by component (from % of one core over the run): where a delivery's cost goes. */
function cpuPerDelivery(run: { rate: number; cpu: CpuUsage }): string {
  return Object.entries(run.cpu.byComponent)
    .map(([label, pct]) => `${label} ${((pct * 10) / run.rate).toFixed(2)}`)
    .join(', ');
}

/** Polls `count` (a query on the stack's database) until `done` says so, or fails after `timeoutMs`. */
async function waitForCount(databaseUrl: string, count: (db: Awaited<ReturnType<typeof createPool>>) => Promise<number>, done: (n: number) => boolean, what: string, timeoutMs = 120_000): Promise<void> {
  const db = await createPool(databaseUrl, { maxConnections: 1 });
  try {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const n = await count(db);
      if (done(n)) return;
      if (Date.now() > deadline) throw new Error(`${what}: still ${n} after ${timeoutMs} ms`);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  } finally {
    await db.end();
  }
}

const Count = z.object({ n: z.number() });

/** Waits until the service has queued `n` deliveries for the instance (its backlog is in place). */
const queued = (databaseUrl: string, instanceId: string, n: number) =>
  waitForCount(databaseUrl, (db) => db.oneFirst(sql.type(Count)`SELECT count(*)::int AS n FROM webhook_deliveries WHERE instance_id = ${instanceId}`), (count) => count >= n, 'deliveries queued for the dead endpoint');

/**
 * Waits until none of the instance's deliveries is claimed: after a pause, the claims already in
 * the dead endpoint's lane are still attempted (each hanging for the attempt timeout), so the
 * run "without it" starts only when the last of them has ended.
 */
const unclaimed = (databaseUrl: string, instanceId: string) =>
  waitForCount(databaseUrl, (db) => db.oneFirst(sql.type(Count)`SELECT count(*)::int AS n FROM webhook_deliveries WHERE instance_id = ${instanceId} AND state = 'in_flight'`), (count) => count === 0, 'claims of the paused dead endpoint', 300_000);

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
  // healthy one's; between runs it is paused and the claims its lane still holds are ended.
  const deadAccount = await configure(stack, receiver, '/dead');
  await emitFor(writer, [deadAccount], options.eventsPerEndpoint);
  await queued(stack.isolation.databaseUrl, deadAccount.instance_id, options.eventsPerEndpoint);
  const deadEndpoint = (verb: 'pause' | 'resume') => gatewayctl(stack.env, '--json', 'webhook', verb, '--instance', deadAccount.instance_id);
  const runs: Record<'alone' | 'beside', Array<{ rate: number; cpu: CpuUsage }>> = { alone: [], beside: [] };
  // BENCH_PROFILE=1: the webhooks process's profile over the measured rounds (written when it exits).
  const window = profileWindow();
  window.start();
  for (let round = 1; round <= options.rounds; round++) {
    await deadEndpoint('pause');
    receiver.dead.release();
    await unclaimed(stack.isolation.databaseUrl, deadAccount.instance_id);
    runs.alone.push(await measure(writer, receiver, await endpoints(`alone-${round}`), options.eventsPerEndpoint));
    const hanging = receiver.counts.get('/dead') ?? 0;
    receiver.dead.hangs = true;
    await deadEndpoint('resume');
    await receiver.waitFor(['/dead'], hanging + 1, 30_000); // its attempts hang again
    runs.beside.push(await measure(writer, receiver, await endpoints(`beside-dead-${round}`), options.eventsPerEndpoint));
  }
  window.stop();
  if (PROFILING) {
    // A profile is written when the process exits; a graceful stop waits for the dead endpoint's
    // attempts, so they are ended first (else the stop is escalated to a kill and writes nothing).
    await deadEndpoint('pause');
    receiver.dead.release();
    await unclaimed(stack.isolation.databaseUrl, deadAccount.instance_id);
    await stack.kill('webhooks', 'SIGTERM');
  }
  const profiles = window.read();
  const rates = (list: Array<{ rate: number }>) => list.map((x) => x.rate);
  const alone = Math.max(...rates(runs.alone));
  const besideDead = Math.max(...rates(runs.beside));
  const bestAlone = runs.alone.find((x) => x.rate === alone)!;

  const r = Math.round;
  console.log(
    `webhooks: ${r(alone)} signed deliveries/s to ${options.endpoints} endpoints (${total} events, Kafka to receiver, best of ${options.rounds}); bare HTTP loop: ${r(bare)} req/s ` +
      `(${options.connections} in flight); ratio (webhooks/bare): ${(alone / Math.max(1, bare)).toFixed(2)}; target: ratio >= 0.5`,
  );
  console.log(
    `webhooks: with one dead endpoint (never answers) beside them: ${r(besideDead)} deliveries/s to the healthy endpoints, ` +
      `${((besideDead / alone - 1) * 100).toFixed(1)}% vs without (target: costs under 5%; runs alone ${rates(runs.alone).map(r).join(', ')}, beside ${rates(runs.beside).map(r).join(', ')}); ` +
      `signatures checked ${receiver.signed.valid}/${receiver.signed.checked} valid`,
  );
  console.log(`webhooks: CPU ms per delivery (best run alone): ${cpuPerDelivery(bestAlone)}; other processes ${bestAlone.cpu.otherPct}% of a core`);
  if (profiles.length > 0) console.log(`\n${formatProfiles('webhooks (measured rounds)', profiles, 0)}`);
}
