// The send path's floor: the same processes and hops as a send on the real stack, with none of
// the work (bench/floor/stage.ts). A send is one HTTP request into the API process, an append to
// `requests`, a policy stage (requests -> decisions), a delivery stage (decisions -> the instance's
// sendText -> outcomes), and the API reading decisions and outcomes for its reply. The instance,
// in this process as the simulator is in the real run, answers sendText and then posts the four
// webhooks an Evolution instance posts for a message (send.message at once, then the server,
// delivery and read acks after the simulator's default delays), each appended by the API.
// Whatever the real stack cannot do beyond this floor is its own work; what this floor cannot do
// is the hops'.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import Fastify from 'fastify';
import { Agent, request } from 'undici';
import { KafkaClient } from '@gw/kafka';
import type { Logger } from '@gw/observability';
import { stopProcess } from '../../test/support/stack.ts';
import { floorTopics } from '../floor/topics.ts';
import { PROFILE_FLAGS } from './profile.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const STAGE = 'bench/floor/stage.ts';
/** As the services run (test/support/stack.ts), profiled with them under BENCH_PROFILE=1. */
const NODE_FLAGS = ['--max-semi-space-size=32', ...PROFILE_FLAGS];
/** The simulator's default ack delays (services/instance-simulator/src/options.ts). */
const ACK_DELAYS_MS = [50, 150, 300];

export interface Floor {
  url: string;
  /** Webhooks the instance posted and the API acknowledged. */
  webhooks(): { posted: number; failed: number };
  stop(): Promise<void>;
}

/** An Evolution-sized webhook body (about 700 bytes). */
function webhookBody(event: string, messageId: string, status: string): string {
  return JSON.stringify({
    event,
    instance: 'floor-instance',
    data: { keyId: messageId, remoteJid: '14155550100@s.whatsapp.net', fromMe: true, participant: null, status, instanceId: randomUUID(), messageId },
    destination: 'http://127.0.0.1/hook',
    date_time: new Date().toISOString(),
    sender: '14155550199@s.whatsapp.net',
    server_url: 'http://127.0.0.1',
    apikey: 'floor-instance-token-0000000000000000000000000000',
    padding: 'x'.repeat(260),
  });
}

function spawnStage(role: string, env: Record<string, string>): { child: ChildProcess; ready: Promise<number> } {
  const child = spawn(process.execPath, [...NODE_FLAGS, '--import', 'tsx', STAGE], {
    cwd: ROOT,
    env: { ...process.env, ...env, FLOOR_ROLE: role, STOP_WITH_PARENT_PID: String(process.pid) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => (stderr = (stderr + chunk.toString()).slice(-2000)));
  const ready = new Promise<number>((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const line = out.split('\n').find((l) => l.startsWith('{'));
      if (line) resolve((JSON.parse(line) as { port: number }).port);
    });
    child.once('exit', (code) => reject(new Error(`floor ${role} exited (${code}) before it was ready: ${stderr.trim().slice(-500)}`)));
    setTimeout(() => reject(new Error(`floor ${role} not ready within 60 s`)), 60_000).unref();
  });
  return { child, ready };
}

export async function startFloor(options: { brokers: string[]; logger: Logger; prefix: string; partitions: number }): Promise<Floor> {
  const topics = floorTopics(options.prefix);
  const admin = new KafkaClient({ brokers: options.brokers, clientId: 'bench-floor-admin', logger: options.logger });
  await admin.ensureTopics(Object.values(topics).map((name) => ({ name, partitions: options.partitions })));
  await admin.close();

  const children: ChildProcess[] = [];
  const instance = Fastify({ logger: false });
  const agent = new Agent({ connections: 64 });
  const counts = { posted: 0, failed: 0 };
  const timers = new Set<NodeJS.Timeout>();
  let apiUrl = '';
  const post = (customer: string, body: string) =>
    request(`${apiUrl}/hook/${customer}`, { method: 'POST', dispatcher: agent, headers: { 'content-type': 'application/json' }, body })
      .then(async (res) => {
        await res.body.dump();
        if (res.statusCode === 200) counts.posted++;
        else counts.failed++;
      })
      .catch(() => void counts.failed++);
  instance.post('/message/sendText/:customer', async (req, reply) => {
    const customer = (req.params as { customer: string }).customer;
    const id = randomUUID().replace(/-/g, '').slice(0, 20).toUpperCase();
    void post(customer, webhookBody('send.message', id, 'PENDING'));
    for (const [i, delay] of ACK_DELAYS_MS.entries()) {
      const timer = setTimeout(() => {
        timers.delete(timer);
        void post(customer, webhookBody('messages.update', id, ['SERVER_ACK', 'DELIVERY_ACK', 'READ'][i]!));
      }, delay);
      timers.add(timer);
    }
    return reply.code(201).send({ key: { remoteJid: '14155550100@s.whatsapp.net', fromMe: true, id }, status: 'PENDING' });
  });

  const stop = async () => {
    await Promise.all(children.map((child) => stopProcess(child)));
    for (const timer of timers) clearTimeout(timer);
    await instance.close().catch(() => undefined);
    await agent.close().catch(() => undefined);
  };
  try {
    await instance.listen({ host: '127.0.0.1', port: 0 });
    const instanceUrl = `http://127.0.0.1:${(instance.server.address() as AddressInfo).port}`;
    const env = { FLOOR_PREFIX: options.prefix, KAFKA_BROKERS: options.brokers.join(','), FLOOR_INSTANCE_URL: instanceUrl };
    const stages = ['api', 'policy', 'delivery'].map((role) => spawnStage(role, env));
    children.push(...stages.map((s) => s.child));
    const [apiPort] = await Promise.all(stages.map((s) => s.ready));
    apiUrl = `http://127.0.0.1:${apiPort}`;
  } catch (error) {
    await stop();
    throw error;
  }
  return { url: apiUrl, webhooks: () => ({ ...counts }), stop };
}
