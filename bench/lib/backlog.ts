// True backlog of the stack's consumer groups while the load runs: high watermark minus committed
// offset, summed over partitions (the services' lag gauge is taken right after each fetch, so it
// stays near zero even when records queue up behind a slow batch).
import { Kafka, logLevel } from 'kafkajs';

export interface BacklogPoller {
  start(): Promise<void>;
  /** Stops polling; returns the highest backlog seen per "group <- topic". */
  stop(): Promise<Record<string, number>>;
}

export function backlogPoller(brokers: string[], watch: Array<{ group: string; topic: string; label: string }>, everyMs = 1000): BacklogPoller {
  const kafka = new Kafka({ clientId: 'bench-backlog', brokers, logLevel: logLevel.NOTHING, retry: { retries: 1 } });
  const admin = kafka.admin();
  const peak: Record<string, number> = {};
  let timer: NodeJS.Timeout | undefined;
  let inFlight: Promise<void> = Promise.resolve();
  let running = false;
  const sample = async () => {
    for (const { group, topic, label } of watch) {
      try {
        const [ends, committed] = await Promise.all([admin.fetchTopicOffsets(topic), admin.fetchOffsets({ groupId: group, topics: [topic] })]);
        const done = new Map<number, number>();
        for (const t of committed) for (const p of t.partitions) done.set(p.partition, Number(p.offset));
        let backlog = 0;
        for (const p of ends) {
          const at = done.get(p.partition) ?? -1;
          backlog += Math.max(0, Number(p.high) - (at < 0 ? Number(p.low) : at));
        }
        peak[label] = Math.max(peak[label] ?? 0, backlog);
      } catch {
        // a missed sample is fine
      }
    }
  };
  const tick = () => {
    inFlight = sample().finally(() => {
      if (running) timer = setTimeout(tick, everyMs);
    });
  };
  return {
    async start() {
      await admin.connect();
      running = true;
      tick();
    },
    async stop() {
      running = false;
      clearTimeout(timer);
      await inFlight;
      await admin.disconnect().catch(() => undefined);
      return peak;
    },
  };
}
