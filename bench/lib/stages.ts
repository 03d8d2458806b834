// Where the time of a send goes, from the record timestamps the stages wrote: the API appends
// SendRequested, policy appends SendDecided, delivery appends MessageDispatched / DeliveryFailed.
// Read back after the run (committed records only), matched by correlation id.
import { CORRELATION_HEADER, Topics } from '@gw/events';
import { KafkaClient } from '@gw/kafka';
import type { Logger } from '@gw/observability';

export interface Distribution {
  count: number;
  meanMs: number;
  p50Ms: number;
  p99Ms: number;
}

export interface StageBreakdown {
  sends: number;
  /** SendRequested appended by the API -> SendDecided appended by policy. */
  apiToPolicy: Distribution | null;
  /** SendDecided appended -> delivery outcome appended (includes the simulator call). */
  policyToDelivery: Distribution | null;
  /** Records read back from the three topics (whole run, warm-up included). */
  recordsRead: number;
}

function distribution(values: number[]): Distribution | null {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
  return {
    count: sorted.length,
    meanMs: sorted.reduce((a, b) => a + b, 0) / sorted.length,
    p50Ms: at(0.5),
    p99Ms: at(0.99),
  };
}

export async function stageBreakdown(options: {
  brokers: string[];
  topics: Topics;
  logger: Logger;
  window: { from: number; to: number };
  settleMs?: number;
  maxWaitMs?: number;
}): Promise<StageBreakdown> {
  const kafka = new KafkaClient({ brokers: options.brokers, clientId: 'bench-stage-reader', logger: options.logger });
  const requested = new Map<string, number>();
  const decided = new Map<string, number>();
  const delivered = new Map<string, number>();
  const byTopic = new Map<string, Map<string, number>>([
    [options.topics.name('customerEvents'), requested],
    [options.topics.name('policyDecisions'), decided],
    [options.topics.name('deliveryEvents'), delivered],
  ]);
  let recordsRead = 0;
  let last = Date.now();
  try {
    const consumer = await kafka.listen({
      groupId: options.topics.group(`bench-stage-reader-${Date.now()}`),
      topics: [...byTopic.keys()],
      fromBeginning: true,
      onRecord: (record) => {
        recordsRead++;
        last = Date.now();
        const id = record.headers[CORRELATION_HEADER];
        // The first record per command: later ones with its id (e.g. the delivery fact on customer-events) are not its append.
        if (id && !byTopic.get(record.topic)?.has(id)) byTopic.get(record.topic)?.set(id, Number(record.timestamp));
      },
    });
    await consumer.ready;
    const settleMs = options.settleMs ?? 2000;
    const deadline = Date.now() + (options.maxWaitMs ?? 20_000);
    while (Date.now() - last < settleMs && Date.now() < deadline) await new Promise((r) => setTimeout(r, 200));
  } finally {
    await kafka.close();
  }
  const toPolicy: number[] = [];
  const toDelivery: number[] = [];
  let sends = 0;
  for (const [id, t0] of requested) {
    if (t0 < options.window.from || t0 > options.window.to) continue;
    sends++;
    const t1 = decided.get(id);
    if (t1 === undefined) continue;
    toPolicy.push(t1 - t0);
    const t2 = delivered.get(id);
    if (t2 !== undefined) toDelivery.push(t2 - t1);
  }
  return { sends, apiToPolicy: distribution(toPolicy), policyToDelivery: distribution(toDelivery), recordsRead };
}
