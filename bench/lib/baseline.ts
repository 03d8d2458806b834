// The floor the send path is compared with: a bare fastify route that appends one record to
// Kafka and answers once its own consumer has read it back (one produce + one consume hop, the
// same KafkaClient the services use), in the bench process.
import { randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import Fastify from 'fastify';
import { KafkaClient, type RunningConsumer } from '@gw/kafka';
import type { Logger } from '@gw/observability';

const CORRELATION = 'bench-correlation-id';

export interface Baseline {
  url: string;
  topic: string;
  groupId: string;
  stop(): Promise<void>;
}

export async function startBaseline(options: { brokers: string[]; logger: Logger; prefix: string; partitions: number; replyTimeoutMs: number }): Promise<Baseline> {
  const topic = `${options.prefix}echo`;
  const groupId = `${options.prefix}echo-consumer`;
  const kafka = new KafkaClient({ brokers: options.brokers, clientId: 'bench-baseline', logger: options.logger });
  const app = Fastify({ logger: false });
  let consumer: RunningConsumer | undefined;
  const stop = async () => {
    await app.close().catch(() => undefined);
    await kafka.close();
  };
  try {
    await kafka.ensureTopics([{ name: topic, partitions: options.partitions }]);
    const waiting = new Map<string, () => void>();
    consumer = await kafka.listen({
      groupId,
      topics: [topic],
      fromBeginning: true,
      onRecord: (record) => {
        const id = record.headers[CORRELATION];
        if (id) waiting.get(id)?.();
      },
    });
    await consumer.ready;

    app.post('/echo', async (request, reply) => {
      const id = randomUUID();
      let timer: NodeJS.Timeout | undefined;
      // Registered before the append, so a fast consumer cannot slip past it.
      const consumed = new Promise<boolean>((resolve) => {
        waiting.set(id, () => resolve(true));
        timer = setTimeout(() => resolve(false), options.replyTimeoutMs);
      });
      try {
        await kafka.send([{ topic, key: id, value: Buffer.from(JSON.stringify(request.body)), headers: { [CORRELATION]: id } }]);
        const ok = await consumed;
        return reply.code(ok ? 200 : 504).send({ ok, id });
      } finally {
        clearTimeout(timer);
        waiting.delete(id);
      }
    });
    await app.listen({ host: '127.0.0.1', port: 0 });
  } catch (error) {
    await stop();
    throw error;
  }
  const { port } = app.server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}`, topic, groupId, stop };
}
