import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ConsumedRecord, KafkaClient } from '@gw/kafka';
import { insertEntries, storedCopy } from '@gw/policy-log';
import { createRuntime, type Runtime } from '@gw/runtime';
// The delivery stage's own writer makes the deliveries rows, as it does in the pipeline.
import { claim, recordOutcomes } from '../../../services/delivery/src/dispatch/delivery-store.ts';
import { taskOf } from '../../../services/delivery/src/dispatch/outcomes.ts';
import { decision, delivered } from '../../../test/support/api/fake-replies.ts';
import { isolate, type Isolation } from '../../../test/support/infra.ts';
import { ReplyRouter } from './reply-router.ts';

// Two API processes on real Kafka and Postgres: each reads the decision and delivery topics, and
// each must answer its own sends and hand on only its own replies (docs/architecture.md
// "Request-reply": the cost of a send does not grow with the number of API processes).

let isolation: Isolation;
const runtimes: Runtime[] = [];

beforeAll(async () => {
  isolation = await isolate();
  for (const name of ['api-a', 'api-b']) runtimes.push(await createRuntime(`${name}-test`, { env: { ...process.env, ...isolation.env }, defaultMetrics: false }));
});

afterAll(async () => {
  for (const runtime of runtimes) await runtime.close();
  await isolation?.cleanup();
});

/** The process's Kafka client, noting every record its reply listener is handed. */
function noting(kafka: KafkaClient, handed: ConsumedRecord[]): KafkaClient {
  return new Proxy(kafka, {
    get: (target, name) =>
      name === 'listen'
        ? (options: Parameters<KafkaClient['listen']>[0]) => target.listen({ ...options, onRecord: (record) => (handed.push(record), options.onRecord(record)) })
        : Reflect.get(target, name, target),
  });
}

async function until(condition: () => boolean, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 25));
  }
}

describe('ReplyRouter with two API processes', () => {
  it('each process answers its own sends and is handed none of the other\'s replies', async () => {
    const processes = runtimes.map((runtime) => {
      const handed: ConsumedRecord[] = [];
      return { runtime, handed, router: new ReplyRouter(noting(runtime.kafka, handed), runtime.codec, runtime.topics, runtime.pool, runtime.logger) };
    });
    for (const { runtime, router } of processes) {
      const consumer = await router.start();
      runtime.consumers.push(consumer);
      await consumer.ready;
    }
    const [a, b] = processes as [(typeof processes)[number], (typeof processes)[number]];
    const waitingA = a.router.wait('cmd_of_a', 20_000);
    const waitingB = b.router.wait('cmd_of_b', 20_000);

    // The policy and delivery stages' replies to both (one customer: the same partitions), decisions
    // first as in the pipeline (a delivery outcome answers a request, which then waits no more).
    const { codec, kafka } = a.runtime;
    const commandIds = ['cmd_of_a', 'cmd_of_b'];
    await kafka.send(await Promise.all(commandIds.map((commandId) => codec.encode('SendDecided', decision(commandId)))));
    await until(() => a.handed.length === 1 && b.handed.length === 1);
    await kafka.send(
      await Promise.all(
        commandIds.map((commandId) => {
          const { delivery } = delivered({ commandId, deadlineMs: 0, options: {} });
          if (delivery?.type !== 'MessageDispatched') throw new Error('a dispatch was expected');
          return codec.encode('MessageDispatched', delivery.payload);
        }),
      ),
    );

    const [progressA, progressB] = await Promise.all([waitingA, waitingB]);
    expect(progressA.decision?.correlation_id).toBe('cmd_of_a');
    expect(progressA.delivery).toMatchObject({ type: 'MessageDispatched', payload: { correlation_id: 'cmd_of_a' } });
    expect(progressB.decision?.correlation_id).toBe('cmd_of_b');
    expect(progressB.delivery).toMatchObject({ type: 'MessageDispatched', payload: { correlation_id: 'cmd_of_b' } });
    // The other process's replies were passed over in their batch, never made records.
    expect(a.handed.map((r) => r.headers['correlation-id'])).toEqual(['cmd_of_a', 'cmd_of_a']);
    expect(b.handed.map((r) => r.headers['correlation-id'])).toEqual(['cmd_of_b', 'cmd_of_b']);
  });

  it('a reply appended while no request of this process waited (a restart, a rejoin) is answered from the projections, well before the deadline', async () => {
    const runtime = runtimes[0]!;
    // Polled every 200 ms here (1 s in the service); nothing for this command comes over Kafka.
    const router = new ReplyRouter(runtime.kafka, runtime.codec, runtime.topics, runtime.pool, runtime.logger, 200);
    const consumer = await router.start();
    runtime.consumers.push(consumer);
    await consumer.ready;
    const decided = decision('cmd_while_away', { log_id: 9001, dispatch: { instance_name: 'front', phone: '+14155552671', text: 'Your order has shipped.' } });
    await insertEntries(runtime.pool, [decided]);
    await claim(runtime.pool, [taskOf(decided, 'front')]);
    const { delivery } = delivered({ commandId: 'cmd_while_away', deadlineMs: 0, options: {} });
    await recordOutcomes(runtime.pool, [{ messageId: decided.message_id, attempt: 1, outcome: delivery!, detail: null }]);

    const started = Date.now();
    const progress = await router.wait('cmd_while_away', 30_000);
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(progress).toEqual({ decision: storedCopy(decided), delivery });
  });
});
